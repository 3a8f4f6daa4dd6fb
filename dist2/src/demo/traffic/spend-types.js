export {};
//# sourceMappingURL=spend-types.js.map