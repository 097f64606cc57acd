import { MemoryCheckpointStore } from './index.js';
import { describeCheckpointStore } from './testing/index.js';

describeCheckpointStore({
  name: 'MemoryCheckpointStore',
  create: () => new MemoryCheckpointStore(),
  // One process's memory: there is no second instance over the same data, and nothing to fail.
  peer: (store) => store,
  failing: null,
  processes: null,
});
