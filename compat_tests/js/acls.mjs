// kafkajs ACL admin calls and ACL denials for the compat tests. ACLs and filters are JSON objects with
// kafkajs' field names and Kafka's numeric codes (kafkajs' enums are those codes).
//
//   node acls.mjs <bootstrap> create <acl-json-array>
//   node acls.mjs <bootstrap> describe <filter-json>
//   node acls.mjs <bootstrap> delete <filter-json-array>
//   node acls.mjs <bootstrap> produce <topic>
//       one message, no retries; reports the offset
//   node acls.mjs <bootstrap> consume <topic> <group>
//       joins <group>; reports the first message, or throws what crashed the consumer
//   node acls.mjs <bootstrap> transaction <topic> <transactionalId>
//       one message in a committed transaction
//
// Prints one JSON document on stdout: {"ok": <result>} or {"error": {...}}; assertions live in the tests.
import { runWith } from './lib/run.mjs'

const CONSUME_TIMEOUT_MS = 30000

async function withAdmin(kafka, work) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.disconnect()
  }
}

const operations = {
  create: ({ kafka }, [acls]) =>
    withAdmin(kafka, async (admin) => { await admin.createAcls({ acl: JSON.parse(acls) }); return { created: true } }),

  describe: ({ kafka }, [filter]) => withAdmin(kafka, (admin) => admin.describeAcls(JSON.parse(filter))),

  delete: ({ kafka }, [filters]) => withAdmin(kafka, (admin) => admin.deleteAcls({ filters: JSON.parse(filters) })),

  produce: async ({ kafka }, [topic]) => {
    const producer = kafka.producer({ retry: { retries: 0 } })
    await producer.connect()
    try {
      return await producer.send({ topic, messages: [{ value: 'v' }] })
    } finally {
      await producer.disconnect()
    }
  },

  consume: async ({ kafka }, [topic, groupId]) => {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500,
      retry: { retries: 0 } })
    await consumer.connect()
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true })
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no message and no crash')), CONSUME_TIMEOUT_MS)
        consumer.on(consumer.events.CRASH, ({ payload }) => { clearTimeout(timer); reject(payload.error) })
        consumer.run({
          eachMessage: async ({ message }) => { clearTimeout(timer); resolve({ value: message.value.toString() }) },
        }).catch((error) => { clearTimeout(timer); reject(error) })
      })
    } finally {
      await consumer.disconnect()
    }
  },

  transaction: async ({ kafka }, [topic, transactionalId]) => {
    const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      const transaction = await producer.transaction()
      await transaction.send({ topic, messages: [{ value: 'v' }] })
      await transaction.commit()
      return { committed: true }
    } finally {
      await producer.disconnect()
    }
  },
}

await runWith(process.argv.slice(2), operations, (kafka) => ({
  kafka,
  connect: async () => {},
  disconnect: async () => {},
}))
