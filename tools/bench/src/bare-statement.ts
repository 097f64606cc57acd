// The floor of the CLI row: a process that connects with postgres.js and runs one statement.
import postgres from 'postgres';

const sql = postgres(process.argv[2] ?? '', { max: 1, onnotice: () => {} });
await sql`select 1`;
await sql.end();
