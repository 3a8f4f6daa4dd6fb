/**
 * The record batches of a partition as the local stack's broker stored them
 * (its log segments under .state/kafka/data): what codec a producer really
 * used, and where a batch's bytes are, for tests that must corrupt one after
 * the broker accepted it (the broker validates batches on produce, and
 * serves the stored bytes on fetch without looking at them again).
 * Only for the local stack: in a container the files are out of reach.
 */
import { existsSync, openSync, readdirSync, readFileSync, closeSync, writeSync } from 'node:fs';
import { REPO_ROOT } from './services.js';
export const KAFKA_DATA = `${REPO_ROOT}.state/kafka/data`;
/** Whether this machine holds the broker's log files (the local stack). */
export function kafkaLogReadable() {
    return existsSync(KAFKA_DATA);
}
/** Every batch of a partition, in offset order. */
export function storedBatches(topic, partition) {
    const dir = `${KAFKA_DATA}/${topic}-${partition}`;
    const batches = [];
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.log')).sort()) {
        const file = `${dir}/${name}`;
        const bytes = readFileSync(file);
        // A batch: base offset (8), length of the rest (4), leader epoch (4), magic (1), CRC (4), attributes (2), last offset delta (4), …
        for (let at = 0; at + 61 <= bytes.length;) {
            const size = 12 + bytes.readInt32BE(at + 8);
            if (size <= 12 || at + size > bytes.length)
                break;
            const baseOffset = bytes.readBigInt64BE(at);
            const attributes = bytes.readInt16BE(at + 21);
            batches.push({
                file,
                position: at,
                size,
                baseOffset,
                lastOffset: baseOffset + BigInt(bytes.readInt32BE(at + 23)),
                codec: attributes & 0x07,
                transactional: (attributes & 0x10) !== 0,
                control: (attributes & 0x20) !== 0,
            });
            at += size;
        }
    }
    return batches;
}
/** Writes `bytes` over a stored batch, at `offset` bytes from its start (the broker's files change in place; its CRC is not checked again on fetch). */
export function overwriteBatch(batch, offset, bytes) {
    if (offset < 0 || offset + bytes.length > batch.size)
        throw new Error(`overwrite of ${bytes.length} bytes at ${offset} falls outside the batch (${batch.size} bytes)`);
    const fd = openSync(batch.file, 'r+');
    try {
        writeSync(fd, bytes, 0, bytes.length, batch.position + offset);
    }
    finally {
        closeSync(fd);
    }
}
//# sourceMappingURL=kafka-log.js.map