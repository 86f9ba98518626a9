/**
 * The assignment rule of a shared cluster: rendezvous (highest-random-weight) hashing of a topic partition over
 * the live broker ids (Thaler and Ravishankar, 1996). Every broker computes it alone from the same live set, so
 * no consensus of our own is needed, and a join or a leave moves only the partitions it must: a joining broker
 * takes exactly the partitions whose highest weight is now its own, a leaving one gives up exactly its own,
 * each to the broker next in that partition's order.
 *
 *   weight(t, p, b) = mix32(h(t, p) + mix32(b))       h: FNV-1a over the topic's UTF-16 code units, then p
 *   order(t, p)     = live ids by weight, descending (a tie, one in 2^32, goes to the lower id)
 *   owner(t, p)     = order(t, p)[0]
 *
 * The weights are 32-bit integers from fixed arithmetic (Math.imul, no platform hash), so every broker of every
 * version agrees; a change of these functions is a change of where every partition lives.
 */

/** murmur3's 32-bit finalizer: every input bit reaches every output bit. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The hash of a topic partition, computed once per partition and combined with each broker id. */
export function partitionHash(topic: string, partition: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < topic.length; i++) {
    h ^= topic.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= 0xff; // a separator no code unit of the name can cancel: ("a", 12) and ("a1", 2) differ
  h = Math.imul(h, 0x01000193);
  return mix32((h ^ Math.imul(partition + 1, 0x9e3779b1)) >>> 0);
}

/** The weight of broker `brokerId` for the partition whose hash is `ph`. */
export function rendezvousWeight(ph: number, brokerId: number): number {
  return mix32((ph + mix32((brokerId ^ 0x5bd1e995) >>> 0)) >>> 0);
}

/** The broker the rule names for the partition (the highest weight), or -1 when `brokers` is empty. */
export function rendezvousOwner(topic: string, partition: number, brokers: readonly number[]): number {
  const ph = partitionHash(topic, partition);
  let best = -1;
  let bestWeight = -1;
  for (const b of brokers) {
    const w = rendezvousWeight(ph, b);
    if (w > bestWeight || (w === bestWeight && b < best)) {
      best = b;
      bestWeight = w;
    }
  }
  return best;
}

/** Every broker of `brokers` in the partition's rendezvous order, highest weight first. */
export function rendezvousOrder(topic: string, partition: number, brokers: readonly number[]): number[] {
  const ph = partitionHash(topic, partition);
  const weighted = brokers.map((b) => [rendezvousWeight(ph, b), b] as const);
  weighted.sort((x, y) => y[0] - x[0] || x[1] - y[1]);
  return weighted.map(([, b]) => b);
}
