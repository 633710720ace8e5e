// kafkajs CreatePartitions for the compat tests.
//
//   node create_partitions.mjs <bootstrap> grow <topic> <count>
//   node create_partitions.mjs <bootstrap> partitions <topic>
//
// grow prints {"ok": {"grown": true}} when kafkajs returned, {"error": ...} when it threw (e.g. INVALID_PARTITIONS);
// partitions prints the partition ids kafkajs sees in fresh metadata.
import { runAdmin, usage } from './lib/run.mjs'

const operations = {
  grow: async (admin, [topic, count]) => {
    if (topic === undefined || count === undefined) usage('grow <topic> <count>')
    await admin.createPartitions({ topicPartitions: [{ topic, count: Number(count) }], timeout: 10000 })
    return { grown: true }
  },

  partitions: async (admin, [topic]) => {
    if (topic === undefined) usage('partitions <topic>')
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    return topics[0].partitions.map((p) => p.partitionId).sort((a, b) => a - b)
  },
}

await runAdmin(process.argv.slice(2), operations)
