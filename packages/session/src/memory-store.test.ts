import { MemoryCheckpointStore } from './index.js';
import { describeCheckpointStore } from './testing/index.js';

describeCheckpointStore({
  name: 'MemoryCheckpointStore',
  create: () => new MemoryCheckpointStore(),
});
