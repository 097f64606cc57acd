import { describeAiSdkOn } from '../test/ai-sdk-suite.js';

// The AI SDK run kind on PostgreSQL server (a database of its own).
await describeAiSdkOn('postgres');
