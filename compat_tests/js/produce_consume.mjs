// kafkajs on the data plane: produce, fetch (no consumer group), list offsets, delete records.
//
//   node produce_consume.mjs <bootstrap> produce <topic> <messages.json> [compression] [acks] [idempotent|plain]
//   node produce_consume.mjs <bootstrap> fetch <topic> <partition> <offset> <count> [isolation-level]
//   node produce_consume.mjs <bootstrap> offsets <topic> [timestamp]
//   node produce_consume.mjs <bootstrap> delete-records <topic> <partition> <offset>
//
// messages.json is [{partition, key, value, headers: {name: value}, timestamp}], where key, value and
// header values are base64 (null stays null) and timestamp is ms since the epoch (or null). Fetched
// records come back the same way, with their offsets. kafkajs has no assign(): `fetch` sends Fetch
// requests through kafkajs's own cluster and broker classes, as its consumer does, and decodes the
// record batches with kafkajs's decoder.
//
// Prints one JSON document on stdout: {"ok": <result>} or {"error": {...}} (see lib/run.mjs).
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { CompressionTypes, Partitioners, logLevel } from 'kafkajs'
import { runWith, usage } from './lib/run.mjs'

const require = createRequire(import.meta.url)
const Cluster = require('kafkajs/src/cluster')
const { createLogger } = require('kafkajs/src/loggers')
const socketFactory = require('kafkajs/src/network/socketFactory')
const { createErrorFromCode } = require('kafkajs/src/protocol/error')

const FETCH_DEADLINE_MS = 20000

const fromBase64 = (text) => (text === null || text === undefined ? null : Buffer.from(text, 'base64'))
const toBase64 = (buffer) => (buffer === null || buffer === undefined ? null : Buffer.from(buffer).toString('base64'))

// Opens the kafkajs clients an operation asks for and closes them all at the end.
class Clients {
  constructor(kafka, bootstrap) {
    this.kafka = kafka
    this.bootstrap = bootstrap
    this.opened = []
  }

  async connect() {}

  async disconnect() {
    for (const client of this.opened.reverse()) await client.disconnect()
  }

  async open(client) {
    await client.connect()
    this.opened.push(client)
    return client
  }

  producer(idempotent = false) {
    // kafkajs's idempotent producer allows one request in flight.
    const options = idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {}
    return this.open(this.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, ...options }))
  }

  admin() {
    return this.open(this.kafka.admin())
  }

  cluster() {
    const level = logLevel[process.env.KEMU_KAFKAJS_LOG_LEVEL ?? 'WARN'] ?? logLevel.WARN
    const logCreator = () => ({ namespace, label, log }) =>
      process.stderr.write(`[kafkajs ${label} ${namespace}] ${log.message}\n`)
    return this.open(new Cluster({
      logger: createLogger({ level, logCreator }),
      socketFactory: socketFactory(),
      brokers: [this.bootstrap],
      clientId: 'kemu-compat-kafkajs',
      connectionTimeout: 5000,
      requestTimeout: 15000,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
      allowAutoTopicCreation: false,
    }))
  }
}

const operations = {
  produce: async (clients, [topic, file, compression = 'None', acks = '-1', mode = 'plain']) => {
    if (topic === undefined || file === undefined) usage('produce <topic> <messages.json> [compression] [acks] [idempotent|plain]')
    const messages = JSON.parse(readFileSync(file, 'utf8')).map((m) => ({
      partition: m.partition,
      key: fromBase64(m.key),
      value: fromBase64(m.value),
      headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, fromBase64(v)])),
      ...(m.timestamp === null || m.timestamp === undefined ? {} : { timestamp: String(m.timestamp) }),
    }))
    const producer = await clients.producer(mode === 'idempotent')
    return producer.send({ topic, messages, acks: Number(acks), compression: CompressionTypes[compression] })
  },

  fetch: async (clients, [topic, partition, offset, count, isolationLevel = '0']) => {
    if (count === undefined) usage('fetch <topic> <partition> <offset> <count> [isolation-level]')
    const cluster = await clients.cluster()
    await cluster.addTargetTopic(topic)
    const [nodeId] = Object.keys(cluster.findLeaderForPartitions(topic, [Number(partition)]))
    const broker = await cluster.findBroker({ nodeId })
    let next = BigInt(offset)
    const records = []
    const deadline = Date.now() + FETCH_DEADLINE_MS
    while (records.length < Number(count) && Date.now() < deadline) {
      const response = await broker.fetch({
        isolationLevel: Number(isolationLevel),
        maxWaitTime: 500,
        minBytes: 1,
        maxBytes: 16 * 1024 * 1024,
        topics: [{ topic, partitions: [{ partition: Number(partition), fetchOffset: next.toString(), maxBytes: 4 * 1024 * 1024 }] }],
      })
      for (const { partitions } of response.responses) {
        for (const data of partitions) {
          if (data.errorCode !== 0) throw createErrorFromCode(data.errorCode)
          for (const message of data.messages) {
            if (message.isControlRecord || BigInt(message.offset) < next) continue
            records.push({
              partition: data.partition,
              offset: Number(message.offset),
              key: toBase64(message.key),
              value: toBase64(message.value),
              headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, toBase64(v)])),
              timestamp: Number(message.timestamp),
            })
            next = BigInt(message.offset) + 1n
          }
        }
      }
    }
    return records
  },

  offsets: async (clients, [topic, timestamp]) => {
    if (topic === undefined) usage('offsets <topic> [timestamp]')
    const admin = await clients.admin()
    const result = { offsets: await admin.fetchTopicOffsets(topic) }
    if (timestamp !== undefined) result.byTimestamp = await admin.fetchTopicOffsetsByTimestamp(topic, Number(timestamp))
    return result
  },

  'delete-records': async (clients, [topic, partition, offset]) => {
    if (offset === undefined) usage('delete-records <topic> <partition> <offset>')
    const admin = await clients.admin()
    await admin.fetchTopicMetadata({ topics: [topic] }) // deleteTopicRecords needs the leaders loaded
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: Number(partition), offset }] })
    return { topic, partition: Number(partition), offset }
  },
}

await runWith(process.argv.slice(2), operations, (kafka) => new Clients(kafka, process.argv[2]))
