/** Redis: the BullMQ queues of the worker and of ingest's alert evaluations. */
import { z } from 'zod';
import { secret, service, setting } from './setting.js';
const redisUrl = z
    .string()
    .url('expected a redis:// URL such as redis://127.0.0.1:6379')
    .refine((u) => /^rediss?:\/\//.test(u), { message: 'expected a redis:// URL such as redis://127.0.0.1:6379' });
export const redis = service({
    title: 'Redis',
    vars: {
        AGENTLEDGER_REDIS_URL: setting(redisUrl.default('redis://agentledger@127.0.0.1:6379'), `Redis for the BullMQ queues. The user in it is the ACL user (none: Redis's
       \`default\`); the default is the local stack's ACL user. A password in the URL
       wins over \`AGENTLEDGER_REDIS_PASSWORD\` (printed as \`***\`).`, { show: 'url' }),
        AGENTLEDGER_REDIS_PASSWORD: secret(z.string().default('agentledger'), `Redis password, used when \`AGENTLEDGER_REDIS_URL\` carries none (with the URL's
       user, or Redis's \`default\` user when it names none); the default is the local
       stack's. Never printed.`),
        AGENTLEDGER_QUEUE_PREFIX: setting(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected letters, digits, _ or -').default('agentledger'), 'Prefix of every BullMQ key, so several deployments can share a Redis (1 to 64 letters, digits, `_` or `-`).'),
    },
    config: (e) => ({
        redis: { url: redisUrlWithPassword(e.AGENTLEDGER_REDIS_URL, e.AGENTLEDGER_REDIS_PASSWORD), queuePrefix: e.AGENTLEDGER_QUEUE_PREFIX },
    }),
    redacts: { 'redis.url': ['AGENTLEDGER_REDIS_URL', 'AGENTLEDGER_REDIS_PASSWORD'] },
});
/**
 * The Redis URL every client connects with: AGENTLEDGER_REDIS_PASSWORD written
 * into it unless it has a password of its own. One URL carries the credentials,
 * so each place that connects (BullMQ, doctor) authenticates the same way and
 * redactUrl() hides them wherever it is shown.
 */
export function redisUrlWithPassword(url, password) {
    const u = new URL(url);
    if (u.password !== '' || password === '')
        return url;
    u.password = encodeURIComponent(password);
    return u.toString();
}
//# sourceMappingURL=redis.js.map