import { describeAiSdkOn } from '../test/ai-sdk-suite.js';

// The AI SDK run kind on PGlite (one instance for this file).
await describeAiSdkOn('pglite');
