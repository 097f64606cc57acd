import { MemoryContinuationStore } from './memory.js';
import { describeContinuationStore } from './testing/index.js';

describeContinuationStore({
  name: 'MemoryContinuationStore',
  create: () => new MemoryContinuationStore(),
  // One process's memory: there is no second instance over the same data, and nothing to fail.
  peer: (store) => store,
  failing: null,
  processes: null,
});
