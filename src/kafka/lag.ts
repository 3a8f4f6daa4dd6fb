/** How many records wait past a consumer group's committed offsets (idle exit, the stall watchdog). */
import type { Kafka } from 'kafkajs';

/** Records past the group's committed offsets, in every partition of the topics, or only in those of `owned`. */
export async function uncommittedRecords(
  kafka: Kafka,
  groupId: string,
  allTopics: readonly string[],
  owned?: Readonly<Record<string, readonly number[]>>,
): Promise<bigint> {
  const topics = allTopics.filter((t) => owned === undefined || (owned[t]?.length ?? 0) > 0);
  if (topics.length === 0) return 0n;
  const admin = kafka.admin();
  await admin.connect();
  try {
    const committed = await admin.fetchOffsets({ groupId, topics });
    let waiting = 0n;
    for (const topic of topics) {
      const high = await admin.fetchTopicOffsets(topic);
      const mine = committed.find((c) => c.topic === topic);
      for (const p of high) {
        if (owned !== undefined && !owned[topic]?.includes(p.partition)) continue;
        const c = mine?.partitions.find((x) => x.partition === p.partition);
        const at = c && Number(c.offset) >= 0 ? BigInt(c.offset) : BigInt(p.low);
        if (at < BigInt(p.high)) waiting += BigInt(p.high) - at;
      }
    }
    return waiting;
  } finally {
    await admin.disconnect();
  }
}
