import { describeAgentsOn } from '../test/agents-suite.js';

// The OpenAI Agents run kind on PGlite (one instance for this file).
await describeAgentsOn('pglite');
