import { describeSqlStorageOn } from '../test/sql-storage-suite.js';

// The SQL storage on PGlite (one instance for this file).
await describeSqlStorageOn('pglite');
