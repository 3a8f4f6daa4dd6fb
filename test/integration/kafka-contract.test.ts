/**
 * kafkaGroup(), the Kafka adapter over kafkajs, against the local broker:
 * the contract of src/kafka/contract.ts (test/support/kafka-contract.ts).
 */
import { createLogger } from '../../src/observability/logger.js';
import { createKafka } from '../../src/kafka/client.js';
import { kafkaGroup } from '../../src/kafka/group.js';
import { kafkaContract } from '../support/kafka-contract.js';

kafkaContract('kafkaGroup', (config) => kafkaGroup(createKafka(config.kafka, createLogger('error')), config));
