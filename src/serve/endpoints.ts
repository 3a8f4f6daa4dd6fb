/**
 * The page's endpoints beyond the commands' JSON (README "The page"): each a
 * function of the query string, reading through the typed read layer as the
 * read-only user.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { EndpointHandler } from './server.js';

export function pageEndpoints(ch: ClickHouseClient): Record<string, EndpointHandler> {
  void ch;
  return {};
}
