import { describeInterruptsOn } from '../test/interrupts-suite.js';

// LangGraph interrupts as durable questions on PGlite (one instance for this file).
await describeInterruptsOn('pglite');
