// Shared plumbing for the kafkajs scripts: argument parsing, a kafkajs client that logs to stderr
// (stdout carries only the JSON result), and the {"ok"} / {"error"} envelope.
import { Kafka, logLevel } from 'kafkajs'

const USAGE_EXIT_CODE = 2

export class UsageError extends Error {}

export function usage(text) {
  throw new UsageError(`usage: ${process.argv[1]} <bootstrap> ${text}`)
}

function stderrLogCreator() {
  return ({ namespace, level, label, log }) => {
    const { message, ...extra } = log
    process.stderr.write(`[kafkajs ${label} ${namespace}] ${message} ${JSON.stringify(extra)}\n`)
  }
}

export function makeKafka(bootstrap) {
  return new Kafka({
    clientId: 'kemu-compat-kafkajs',
    brokers: bootstrap.split(','),  // a bootstrap list, host:port,host:port, as every Kafka client takes it
    connectionTimeout: 5000,
    requestTimeout: 15000,
    // Few, quick retries: a broker bug should surface as an error well inside the test timeout.
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel[process.env.KEMU_KAFKAJS_LOG_LEVEL ?? 'WARN'] ?? logLevel.WARN,
    logCreator: stderrLogCreator,
  })
}

function describeError(error) {
  const described = {
    name: error.name,
    type: error.type ?? null,
    code: error.code ?? null,
    message: error.message,
    retriable: error.retriable ?? null,
  }
  // createTopics/deleteTopics wrap per-topic failures in a KafkaJSAggregateError.
  if (Array.isArray(error.errors)) described.errors = error.errors.map(describeError)
  if (error.cause instanceof Error) described.cause = describeError(error.cause)
  return described
}

function emit(document) {
  process.stdout.write(`${JSON.stringify(document)}\n`)
}

export async function runWith(argv, operations, makeClient) {
  const [bootstrap, operation, ...args] = argv
  const run = operations[operation]
  if (bootstrap === undefined || run === undefined) {
    process.stderr.write(`usage: <bootstrap> (${Object.keys(operations).join('|')}) [args...]\n`)
    process.exit(USAGE_EXIT_CODE)
  }
  const client = makeClient(makeKafka(bootstrap))
  await client.connect()
  try {
    emit({ ok: await run(client, args) })
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`)
      process.exitCode = USAGE_EXIT_CODE
    } else {
      emit({ error: describeError(error) })
    }
  } finally {
    await client.disconnect()
  }
}

export function runAdmin(argv, operations) {
  return runWith(argv, operations, (kafka) => kafka.admin())
}
