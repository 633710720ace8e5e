// kafkajs with kemu's control endpoint (`kemu serve --control-port`), driven with node's own fetch.
//
//   node control.mjs <bootstrap> stalled-then-advance <controlUrl> <topic> <transactionalId>
//       creates <topic> through the control endpoint; a transactional kafkajs producer sends two records and
//       leaves its transaction open (transactionTimeout 60 s); a plain producer writes "after" behind it. A
//       read_committed kafkajs consumer is held back at the open transaction; the script then asks the
//       endpoint to advance the broker's clock 61 s, which runs the coordinator's timeout, and reads on.
//       Reports what the consumer saw before and after the advance, the clock's readings, and the
//       endpoint's own read_committed read of the topic.
//
// Prints one JSON document on stdout: {"ok": <result>} or {"error": {...}}; assertions live in the tests.
import { runWith, usage } from './lib/run.mjs'

const HELD_BACK_FETCHES = 3
const READ_TIMEOUT_MS = 30000

async function control(base, method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const answer = await response.json()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`)
  return answer
}

function within(ms, what, promise) {
  let timer
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms) })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const operations = {
  'stalled-then-advance': async ({ kafka }, [base, topic, transactionalId]) => {
    if (transactionalId === undefined) usage('stalled-then-advance <controlUrl> <topic> <transactionalId>')
    await control(base, 'POST', '/topics', { name: topic, partitions: 1 })

    const stalled = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1,
      transactionTimeout: 60000 })
    await stalled.connect()
    const open = await stalled.transaction()
    await open.send({ topic, messages: [{ partition: 0, value: 'stalled-0' }, { partition: 0, value: 'stalled-1' }] })
    const plain = kafka.producer()
    await plain.connect()
    await plain.send({ topic, messages: [{ partition: 0, value: 'after' }] })
    await plain.disconnect()

    // Short fetch waits: "held back" is then a few empty fetches, not a few times kafkajs' 5 s default.
    const consumer = kafka.consumer({ groupId: `control-${Date.now()}`, readUncommitted: false,
      sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 200 })
    const seen = []
    let fetches = 0
    let heldBack
    const fetchedEnough = new Promise((resolve) => { heldBack = resolve })
    consumer.on(consumer.events.FETCH, () => { if (++fetches >= HELD_BACK_FETCHES) heldBack() })
    let gotAfter
    const after = new Promise((resolve) => { gotAfter = resolve })
    await consumer.connect()
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true })
      await consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value.toString())
          if (message.value.toString() === 'after') gotAfter()
        },
      })
      await within(READ_TIMEOUT_MS, 'the consumer fetching', fetchedEnough)
      const before = [...seen]
      const clockBefore = await control(base, 'GET', '/clock')
      const clockAfter = await control(base, 'POST', '/clock/advance', { seconds: 61 })
      await within(READ_TIMEOUT_MS, 'the record behind the aborted transaction', after)
      const committed = await control(base, 'GET', `/topics/${encodeURIComponent(topic)}/records?read_committed=true`)
      return {
        before,
        after: seen,
        advancedMs: clockAfter.now_ms - clockBefore.now_ms,
        readCommitted: committed.records.map((r) => r.value),
      }
    } finally {
      await consumer.disconnect()
      await stalled.disconnect()
    }
  },
}

// Each operation builds its own producers and consumers: the "client" is the Kafka object itself.
await runWith(process.argv.slice(2), operations, (kafka) => ({
  kafka,
  connect: async () => {},
  disconnect: async () => {},
}))
