/** The seeded randomness every other part of the generator draws from: one stream per loop, so loops do not shift each other. */
/** mulberry32: a small, fast, seeded 32-bit PRNG. Returns floats in [0, 1). */
export function mulberry32(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
/** An integer in [min, max]. */
export const int = (rng, min, max) => min + Math.floor(rng() * (max - min + 1));
export const pick = (rng, items) => items[Math.floor(rng() * items.length)];
export const chance = (rng, p) => rng() < p;
export function mixSeed(seed, index) {
    let h = Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35);
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    h ^= h >>> 15;
    return h >>> 0;
}
//# sourceMappingURL=prng.js.map