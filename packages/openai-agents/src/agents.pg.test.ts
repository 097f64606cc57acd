import { describeAgentsOn } from '../test/agents-suite.js';

// The OpenAI Agents run kind on PostgreSQL server (a database of its own).
await describeAgentsOn('postgres');
