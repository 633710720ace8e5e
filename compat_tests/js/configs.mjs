// kafkajs config admin for the compat tests (DescribeConfigs / AlterConfigs).
//
//   node configs.mjs <bootstrap> describe <topic|broker> <name> [config-name...]
//   node configs.mjs <bootstrap> alter <topic|broker> <name> <key=value>...
//   node configs.mjs <bootstrap> validate-alter <topic|broker> <name> <key=value>...
//
// describe prints {"ok": {"<config>": {value, source, isDefault, readOnly, isSensitive, synonyms}}}
// (kafkajs's configEntries, keyed by name) with synonyms requested; alter prints kafkajs's answer.
// Errors kafkajs reports per resource are returned as they came, so the test can assert on them.
import kafkajs from 'kafkajs'
import { runAdmin, usage } from './lib/run.mjs'

const { ConfigResourceTypes } = kafkajs

function resourceType(kind) {
  const type = { topic: ConfigResourceTypes.TOPIC, broker: ConfigResourceTypes.BROKER }[kind]
  if (type === undefined) usage('(describe|alter|validate-alter) <topic|broker> <name> ...')
  return type
}

function entries(pairs) {
  if (pairs.length === 0) usage('alter <topic|broker> <name> <key=value>...')
  return pairs.map((pair) => {
    const at = pair.indexOf('=')
    return { name: pair.slice(0, at), value: pair.slice(at + 1) }
  })
}

async function alter(admin, [kind, name, ...pairs], validateOnly) {
  const answer = await admin.alterConfigs({
    validateOnly,
    resources: [{ type: resourceType(kind), name, configEntries: entries(pairs) }],
  })
  return answer.resources
}

const operations = {
  describe: async (admin, [kind, name, ...configNames]) => {
    const answer = await admin.describeConfigs({
      includeSynonyms: true,
      resources: [{ type: resourceType(kind), name, configNames: configNames.length ? configNames : undefined }],
    })
    const [resource] = answer.resources
    const configs = {}
    for (const entry of resource.configEntries) {
      configs[entry.configName] = {
        value: entry.configValue,
        source: entry.configSource,
        isDefault: entry.isDefault,
        readOnly: entry.readOnly,
        isSensitive: entry.isSensitive,
        synonyms: entry.configSynonyms.map((s) => [s.configName, s.configValue, s.configSource]),
      }
    }
    return { errorCode: resource.errorCode, configs }
  },

  alter: (admin, args) => alter(admin, args, false),

  'validate-alter': (admin, args) => alter(admin, args, true),
}

await runAdmin(process.argv.slice(2), operations)
