import { MemoryContinuationStore } from './memory.js';
import { describeContinuationStore } from './testing/index.js';

describeContinuationStore({
  name: 'MemoryContinuationStore',
  create: () => new MemoryContinuationStore(),
});
