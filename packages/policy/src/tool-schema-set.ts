import { PolicyError } from './errors.js';
import { type CedarType, compileShape, type Shape } from './tool-schema.js';

/** A tool the policies decide on: its name (the Cedar action) and the JSON schema of its arguments. */
export interface ToolDefinition {
  /** The tool's name as the model calls it; the action is `Action::"<name>"`. */
  name: string;
  /** The JSON schema of its arguments (an object); policies read them as `context.input`. */
  inputSchema: unknown;
}

/** The Cedar entity types and context every action shares. */
const TIME: CedarType = {
  type: 'Record',
  attributes: {
    at: { type: 'Extension', name: 'datetime', required: true },
    hour: { type: 'Long', required: true },
    weekday: { type: 'Long', required: true },
  },
};

const COUNTERS: CedarType = {
  type: 'Record',
  attributes: {
    questions: { type: 'Long', required: true },
    calls: { type: 'Long', required: true },
    declines: { type: 'Long', required: true },
  },
};

/** The tools compiled: each one's argument shape, and the Cedar schema (JSON form) of them all. */
export interface CompiledTools {
  shapes: ReadonlyMap<string, Shape>;
  schema: Record<string, unknown>;
}

/**
 * The Cedar schema generated from the tool definitions: one action per tool, applying to a
 * `User` principal (the requester, a member of its `Role`s) and a `Run` resource (its
 * `conversation` and `kind`), with `context.input` typed by the tool's JSON schema.
 */
export function compileTools(tools: readonly ToolDefinition[]): CompiledTools {
  if (!Array.isArray(tools) || tools.length === 0) {
    throw new PolicyError('invalid_argument', 'tools: give at least one tool definition');
  }
  const shapes = new Map<string, Shape>();
  const actions: Record<string, unknown> = {};
  for (const tool of tools) {
    const name = tool?.name;
    if (typeof name !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(name)) {
      throw new PolicyError(
        'invalid_argument',
        `tools: name ${JSON.stringify(name)} is not a tool name (1 to 128 letters, digits, '_', '.', ':', '-')`,
      );
    }
    if (shapes.has(name))
      throw new PolicyError('invalid_argument', `tools: "${name}" is given twice`);
    const shape = compileShape(name, tool.inputSchema);
    if (shape.cedar.type !== 'Record') {
      throw new PolicyError(
        'unsupported_schema',
        `tool "${name}", input: the schema is not an object`,
      );
    }
    shapes.set(name, shape);
    actions[name] = {
      appliesTo: {
        principalTypes: ['User'],
        resourceTypes: ['Run'],
        context: {
          type: 'Record',
          attributes: {
            input: { ...shape.cedar, required: true },
            time: { ...TIME, required: true },
            counters: { ...COUNTERS, required: true },
          },
        },
      },
    };
  }
  const schema = {
    '': {
      entityTypes: {
        Role: {},
        User: { memberOfTypes: ['Role'] },
        Run: {
          shape: {
            type: 'Record',
            attributes: { conversation: { type: 'String' }, kind: { type: 'String' } },
          },
        },
      },
      actions,
    },
  };
  return { shapes, schema };
}
