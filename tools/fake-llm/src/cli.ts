#!/usr/bin/env node
import { startFakeLlm } from './server.js';
import { tripPlanner } from './trip.js';

// Serves the examples' trip-planning model until interrupted, to try them without a key.
const fake = await startFakeLlm(tripPlanner);
console.log(`fake model at ${fake.url}
  ANTHROPIC_BASE_URL=${fake.url} ANTHROPIC_API_KEY=fake
  OPENAI_BASE_URL=${fake.url}/v1 OPENAI_API_KEY=fake`);
process.on('SIGINT', () => void fake.close().then(() => process.exit(0)));
