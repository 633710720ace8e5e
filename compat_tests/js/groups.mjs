// kafkajs consumer groups for the compat tests.
//
//   node groups.mjs <bootstrap> split <topic> <group> <messages>
//       two members join, consume every message, commit; one leaves and the other takes over
//   node groups.mjs <bootstrap> consume <topic> <group> <messages>
//       one member consumes until it has <messages> messages, commits what it read, leaves
//   node groups.mjs <bootstrap> admin <topic> <group> <messages>
//       two members consume and commit; the admin client lists, describes and fetches the group's offsets;
//       once the members left, it deletes the group and lists again
//
// Prints one JSON document (see lib/run.mjs) with what kafkajs saw; the Python tests assert on it.
import { runWith, usage } from './lib/run.mjs'

// kafkajs heartbeats between fetches: a short long-poll lets members notice a rebalance quickly.
const SESSION = { sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 10000, maxWaitTimeInMs: 500 }
const WAIT_MS = 40000

async function until(condition, what) {
  const deadline = Date.now() + WAIT_MS
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// One group member: the messages it read, the last offset per partition, and its latest assignment.
async function startMember(kafka, topic, group, clientName) {
  const consumer = kafka.consumer({ groupId: group, ...SESSION })
  const member = { consumer, values: new Set(), next: new Map(), assignment: null, joins: 0 }
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    member.joins += 1
    member.assignment = (payload.memberAssignment[topic] ?? []).slice().sort()
    member.memberId = payload.memberId
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      member.values.add(message.value.toString())
      member.next.set(partition, BigInt(message.offset) + 1n)
    },
  })
  member.name = clientName
  return member
}

// Commits the positions of the partitions the member owns now (it may have read from others before a rebalance).
async function commitRead(member, topic) {
  const owned = new Set(member.assignment ?? [])
  const offsets = [...member.next.entries()]
    .filter(([partition]) => owned.has(partition))
    .map(([partition, offset]) => ({ topic, partition, offset: offset.toString() }))
  if (offsets.length > 0) await member.consumer.commitOffsets(offsets)
  return offsets.length
}

// Every member has read its own partitions to their end (`messages` spread evenly over 4 partitions).
function caughtUp(members, messages) {
  const end = BigInt(Number(messages) / 4)
  return members.every((m) => (m.assignment ?? []).every((p) => m.next.get(p) === end))
}

function union(members) {
  return new Set(members.flatMap((m) => [...m.values]))
}

function split(members) {
  const parts = members.map((m) => m.assignment ?? [])
  const flat = parts.flat()
  return parts.every((p) => p.length > 0) && new Set(flat).size === flat.length && flat.length === 4
}

async function committedOffsets(kafka, group, topic) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const [entry] = await admin.fetchOffsets({ groupId: group, topics: [topic] })
    return Object.fromEntries(entry.partitions.map((p) => [p.partition, Number(p.offset)]))
  } finally {
    await admin.disconnect()
  }
}

const operations = {
  split: async (kafka, [topic, group, messages]) => {
    if (messages === undefined) usage('split <topic> <group> <messages>')
    const members = [await startMember(kafka, topic, group, 'a'), await startMember(kafka, topic, group, 'b')]
    const [first, second] = members
    try {
      await until(() => split(members) && caughtUp(members, messages), 'a split, each member at the end of its own')
      const assignments = members.map((m) => m.assignment)
      for (const member of members) await commitRead(member, topic)
      await first.consumer.disconnect()
      await until(() => (second.assignment ?? []).length === 4, 'the remaining member to own every partition')
      return {
        assignments,
        consumed: union(members).size,
        takeover: second.assignment,
        committed: await committedOffsets(kafka, group, topic),
      }
    } finally {
      for (const member of members) await member.consumer.disconnect()
    }
  },

  consume: async (kafka, [topic, group, messages]) => {
    if (messages === undefined) usage('consume <topic> <group> <messages>')
    const before = await committedOffsets(kafka, group, topic)
    const member = await startMember(kafka, topic, group, 'a')
    try {
      await until(() => member.values.size >= Number(messages), `${messages} messages`)
      await commitRead(member, topic)
      return { before, values: [...member.values].sort(), after: await committedOffsets(kafka, group, topic) }
    } finally {
      await member.consumer.disconnect()
    }
  },

  admin: async (kafka, [topic, group, messages]) => {
    if (messages === undefined) usage('admin <topic> <group> <messages>')
    const members = [await startMember(kafka, topic, group, 'a'), await startMember(kafka, topic, group, 'b')]
    const admin = kafka.admin()
    await admin.connect()
    try {
      await until(() => split(members) && caughtUp(members, messages), 'a split, each member at the end of its own')
      for (const member of members) await commitRead(member, topic)
      const listed = (await admin.listGroups()).groups.filter((g) => g.groupId === group)
      const { groups: [described] } = await admin.describeGroups([group])
      const offsets = await committedOffsets(kafka, group, topic)
      for (const member of members) await member.consumer.disconnect()
      const deleted = await admin.deleteGroups([group])
      const listedAfter = (await admin.listGroups()).groups.filter((g) => g.groupId === group)
      return {
        listed,
        described: {
          groupId: described.groupId,
          state: described.state,
          protocolType: described.protocolType,
          protocol: described.protocol,
          members: described.members.map((m) => ({ memberId: m.memberId, clientHost: m.clientHost })),
        },
        memberIds: members.map((m) => m.memberId).sort(),
        offsets,
        deleted: deleted.map((d) => ({ groupId: d.groupId, errorCode: d.errorCode })),
        listedAfter,
      }
    } finally {
      for (const member of members) await member.consumer.disconnect()
      await admin.disconnect()
    }
  },
}

// The operations make their own consumers and admin clients from the Kafka object itself.
const withKafka = Object.fromEntries(
  Object.entries(operations).map(([name, run]) => [name, (holder, args) => run(holder.kafka, args)]))
const noConnection = { connect: async () => {}, disconnect: async () => {} }
await runWith(process.argv.slice(2), withKafka, (kafka) => ({ kafka, ...noConnection }))
