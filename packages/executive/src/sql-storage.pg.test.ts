import { describeSqlStorageOn } from '../test/sql-storage-suite.js';

// The SQL storage on the PostgreSQL server (a database of its own).
await describeSqlStorageOn('postgres');
