// kafkajs transactions for the compat tests.
//
//   node transactions.mjs <bootstrap> commit-abort <topicA> <topicB> <partitions> <transactionalId>
//       one transaction committed, one aborted, each writing "<committed|aborted>-<topic index>-<partition>"
//       to every partition; then "end" on every partition, outside any transaction. Reports what a
//       read_committed and a read_uncommitted kafkajs consumer read up to the end records.
//   node transactions.mjs <bootstrap> consume-transform-produce <source> <sink> <group> <transactionalId> <count>
//       reads <count> records of <source> in group <group>, writes each upper-cased to the same partition of
//       <sink> in a transaction that also commits the group's offsets (sendOffsets); reports the group's
//       committed offsets once done.
//   node transactions.mjs <bootstrap> zombie <topic> <transactionalId>
//       a producer sends in a transaction, a second producer with the same transactional id commits one;
//       reports how the first one's commit ends.
//   node transactions.mjs <bootstrap> leave-open <topic> <transactionalId> <transactionTimeoutMs>
//       sends two records to partition 0 in a transaction and exits without ending it; reports partition
//       0's offsets as kafkajs' admin sees them meanwhile (its ListOffsets asks read_committed).
//   node transactions.mjs <bootstrap> read <committed|uncommitted> <partitions> <topic>...
//       what a kafkajs consumer of that isolation reads up to every partition's end record.
//
// Prints one JSON document on stdout: {"ok": <result>} or {"error": {...}}; assertions live in the tests.
import { runWith, usage } from './lib/run.mjs'

const END = 'end'
const READ_TIMEOUT_MS = 30000

function transactionalProducer(kafka, transactionalId) {
  return kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
}

async function inTransaction(producer, work, commit = true) {
  const transaction = await producer.transaction()
  try {
    await work(transaction)
  } catch (error) {
    await transaction.abort()
    throw error
  }
  if (commit) await transaction.commit()
  else await transaction.abort()
}

// Subscribes a fresh group to the topics from the beginning and collects records until every partition's
// end record has arrived.
async function readUntilEnd(kafka, topics, partitions, readUncommitted) {
  const consumer = kafka.consumer({ groupId: `reader-${Date.now()}-${Math.random()}`, readUncommitted,
    sessionTimeout: 10000, heartbeatInterval: 500 })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics, fromBeginning: true })
    const seen = []
    const ended = new Set()
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`end records not all read: ${[...ended]}`)), READ_TIMEOUT_MS)
      consumer.run({
        eachMessage: async ({ topic, partition, message }) => {
          const value = message.value.toString()
          if (value === END) ended.add(`${topic}/${partition}`)
          else seen.push([topic, partition, value])
          if (ended.size === topics.length * partitions) {
            clearTimeout(timer)
            resolve()
          }
        },
      }).catch(reject)
    })
    return seen
  } finally {
    await consumer.disconnect()
  }
}

const operations = {
  'commit-abort': async ({ kafka }, [topicA, topicB, partitionsText, transactionalId]) => {
    if (transactionalId === undefined) usage('commit-abort <topicA> <topicB> <partitions> <transactionalId>')
    const topics = [topicA, topicB]
    const partitions = Number(partitionsText)
    const messagesOf = (prefix) => topics.map((topic, i) => ({
      topic,
      messages: [...Array(partitions).keys()].map((p) => ({ partition: p, value: `${prefix}-${i}-${p}` })),
    }))
    const producer = transactionalProducer(kafka, transactionalId)
    await producer.connect()
    try {
      await inTransaction(producer, (txn) => txn.sendBatch({ topicMessages: messagesOf('committed') }))
      await inTransaction(producer, (txn) => txn.sendBatch({ topicMessages: messagesOf('aborted') }), false)
    } finally {
      await producer.disconnect()
    }
    const plain = kafka.producer()
    await plain.connect()
    try {
      await plain.sendBatch({ topicMessages: topics.map((topic) => ({
        topic, messages: [...Array(partitions).keys()].map((p) => ({ partition: p, value: END })) })) })
    } finally {
      await plain.disconnect()
    }
    return {
      readCommitted: await readUntilEnd(kafka, topics, partitions, false),
      readUncommitted: await readUntilEnd(kafka, topics, partitions, true),
    }
  },

  'consume-transform-produce': async ({ kafka }, [source, sink, group, transactionalId, countText]) => {
    if (countText === undefined) usage('consume-transform-produce <source> <sink> <group> <transactionalId> <count>')
    const count = Number(countText)
    const producer = transactionalProducer(kafka, transactionalId)
    const consumer = kafka.consumer({ groupId: group, readUncommitted: false, sessionTimeout: 10000,
      heartbeatInterval: 500 })
    await producer.connect()
    await consumer.connect()
    let done = 0
    try {
      await consumer.subscribe({ topics: [source], fromBeginning: true })
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${done} of ${count} processed`)), READ_TIMEOUT_MS)
        consumer.run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            if (batch.messages.length === 0) return
            const next = (BigInt(batch.lastOffset()) + 1n).toString()
            await inTransaction(producer, async (txn) => {
              await txn.send({ topic: sink, messages: batch.messages.map((m) => ({
                partition: batch.partition, value: m.value.toString().toUpperCase() })) })
              await txn.sendOffsets({ consumerGroupId: group,
                topics: [{ topic: source, partitions: [{ partition: batch.partition, offset: next }] }] })
            })
            done += batch.messages.length
            if (done >= count) {
              clearTimeout(timer)
              resolve()
            }
          },
        }).catch(reject)
      })
    } finally {
      await consumer.disconnect()
      await producer.disconnect()
    }
    const admin = kafka.admin()
    await admin.connect()
    try {
      const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [source] })
      return { processed: done, offsets: offsets.partitions }
    } finally {
      await admin.disconnect()
    }
  },

  zombie: async ({ kafka }, [topic, transactionalId]) => {
    if (transactionalId === undefined) usage('zombie <topic> <transactionalId>')
    const old = transactionalProducer(kafka, transactionalId)
    const fresh = transactionalProducer(kafka, transactionalId)
    await old.connect()
    try {
      const zombie = await old.transaction()
      await zombie.send({ topic, messages: [{ partition: 0, value: 'from-the-zombie' }] })
      await fresh.connect() // InitProducerId: fences the old producer and aborts its transaction
      await inTransaction(fresh, (txn) => txn.send({ topic, messages: [{ partition: 0, value: 'from-the-new-one' }] }))
      try {
        await zombie.commit()
        return { oldCommit: 'committed' }
      } catch (error) {
        return { oldCommit: 'failed', name: error.name, type: error.type ?? null }
      }
    } finally {
      await old.disconnect()
      await fresh.disconnect()
    }
  },

  'leave-open': async ({ kafka }, [topic, transactionalId, timeoutText]) => {
    if (timeoutText === undefined) usage('leave-open <topic> <transactionalId> <transactionTimeoutMs>')
    const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1,
      transactionTimeout: Number(timeoutText) })
    await producer.connect()
    const open = await producer.transaction()
    await open.send({ topic, messages: [0, 1].map((n) => ({ partition: 0, value: `stalled-${n}` })) })
    const admin = kafka.admin()
    await admin.connect()
    try {
      return { offsets: await admin.fetchTopicOffsets(topic) }
    } finally {
      await admin.disconnect()
      // Dropped without EndTxn: only the coordinator's timeout ends this transaction.
      await producer.disconnect()
    }
  },

  read: async ({ kafka }, [isolation, partitionsText, ...topics]) => {
    if (topics.length === 0) usage('read <committed|uncommitted> <partitions> <topic>...')
    return readUntilEnd(kafka, topics, Number(partitionsText), isolation === 'uncommitted')
  },
}

// Each operation builds its own producers and consumers: the "client" is the Kafka object itself.
await runWith(process.argv.slice(2), operations, (kafka) => ({
  kafka,
  connect: async () => {},
  disconnect: async () => {},
}))
