/**
 * One string per (session, incarnation), unambiguous whatever the ids hold (a
 * separator could occur in them: ("a\0b", "c") and ("a", "b\0c") would share
 * a joined key). A seq appended after "\0" stays unambiguous too: the JSON
 * text ends with "]".
 */
export const incarnationKey = (sessionId, incarnation) => JSON.stringify([sessionId, incarnation]);
//# sourceMappingURL=rows.js.map