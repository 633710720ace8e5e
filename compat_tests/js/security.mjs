// kafkajs over TLS and SASL: produce one message, then consume it back in a consumer group.
//
//   node security.mjs <bootstrap> round-trip <security.json> <topic>
//
// security.json: {"ssl": {"ca": path, "cert": path?, "key": path?}?, "sasl": {"mechanism", "username",
// "password"}?} — kafkajs's own `ssl` and `sasl` options, with file paths for the PEM files.
// Prints {"ok": [values...]} or {"error": {...}} (see lib/run.mjs).
import { readFileSync } from 'node:fs'
import { Kafka, Partitioners, logLevel } from 'kafkajs'
import { runWith } from './lib/run.mjs'

const DEADLINE_MS = 30000

function secured(bootstrap, settings) {
  const ssl = settings.ssl && {
    ca: [readFileSync(settings.ssl.ca, 'utf8')],
    ...(settings.ssl.cert ? { cert: readFileSync(settings.ssl.cert, 'utf8'), key: readFileSync(settings.ssl.key, 'utf8') } : {}),
  }
  return new Kafka({
    clientId: 'kemu-compat-kafkajs-security',
    brokers: [bootstrap],
    ssl,
    sasl: settings.sasl,
    connectionTimeout: 5000,
    requestTimeout: 15000,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.NOTHING,
  })
}

async function roundTrip(_client, [settingsFile, topic]) {
  const bootstrap = process.argv[2]
  const kafka = secured(bootstrap, JSON.parse(readFileSync(settingsFile, 'utf8')))
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  try {
    await producer.send({ topic, messages: [{ value: 'secret record' }] })
  } finally {
    await producer.disconnect()
  }
  const consumer = kafka.consumer({ groupId: `g-${topic}` })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no record within the deadline')), DEADLINE_MS)
      consumer.run({
        eachMessage: async ({ message }) => {
          clearTimeout(timer)
          resolve([message.value.toString()])
        },
      }).catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
}

await runWith(process.argv.slice(2), { 'round-trip': roundTrip }, () => ({
  connect: async () => {},
  disconnect: async () => {},
}))
