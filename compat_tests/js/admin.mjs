// kafkajs admin operations for the compat tests.
//
//   node admin.mjs <bootstrap> list
//   node admin.mjs <bootstrap> describe-cluster
//   node admin.mjs <bootstrap> create <topic> <partitions> [replication-factor]
//   node admin.mjs <bootstrap> metadata <topic>...
//   node admin.mjs <bootstrap> delete <topic>...
//
// Prints exactly one JSON document on stdout: {"ok": <result>} when kafkajs returned, or
// {"error": {...}} when kafkajs threw, so the Python test can assert on Kafka's error type.
// The assertions live in the tests; this script only reports what kafkajs saw.
import { runAdmin, usage } from './lib/run.mjs'

const operations = {
  list: async (admin) => ({ topics: await admin.listTopics() }),

  'describe-cluster': async (admin) => admin.describeCluster(),

  create: async (admin, [topic, partitions, replicationFactor]) => {
    if (topic === undefined || partitions === undefined) usage('create <topic> <partitions> [replication-factor]')
    const spec = { topic, numPartitions: Number(partitions) }
    if (replicationFactor !== undefined) spec.replicationFactor = Number(replicationFactor)
    // kafkajs answers false (instead of throwing) when every topic already exists.
    const created = await admin.createTopics({ topics: [spec], waitForLeaders: true, timeout: 10000 })
    return { created }
  },

  metadata: async (admin, topics) => {
    if (topics.length === 0) usage('metadata <topic>...')
    return admin.fetchTopicMetadata({ topics })
  },

  delete: async (admin, topics) => {
    if (topics.length === 0) usage('delete <topic>...')
    await admin.deleteTopics({ topics, timeout: 10000 })
    return { deleted: topics }
  },
}

await runAdmin(process.argv.slice(2), operations)
