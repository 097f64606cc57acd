import { defineConfig } from 'drizzle-kit';

// `pnpm db:generate` writes the committed migrations under drizzle/ from src/schema.ts.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: './drizzle',
  schemaFilter: ['x_langgraph'],
});
