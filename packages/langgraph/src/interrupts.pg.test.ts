import { describeInterruptsOn } from '../test/interrupts-suite.js';

// LangGraph interrupts as durable questions on PostgreSQL.
await describeInterruptsOn('postgres');
