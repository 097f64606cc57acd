import { type Todo as WireTodo, TodoSchema as WireTodoSchema } from '@x/wire';

/** One item of an agent's plan: the `@x/wire` stream type (`id`, `content`, `status`). */
export type Todo = WireTodo;

/** Schema of {@link Todo} (status `pending | in_progress | completed`). */
export const TodoSchema = WireTodoSchema;
