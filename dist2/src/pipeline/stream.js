export function batchBuilder(malformedRow) {
    const batch = { rows: [], deadLetters: [], verdicts: new Map() };
    const count = (verdict) => void batch.verdicts.set(verdict, (batch.verdicts.get(verdict) ?? 0) + 1);
    return {
        batch,
        count,
        refuse(record, reason) {
            count('malformed');
            batch.deadLetters.push({ record, reason });
            batch.rows.push(malformedRow(record, reason));
        },
    };
}
//# sourceMappingURL=stream.js.map