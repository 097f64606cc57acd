import type { PauseView, RecentView, SessionResponse } from '@x/approval-center/contract';

/** The tabs of the page (Policies only when the server has a policy set to show). */
export type Tab = 'pending' | 'recent' | 'policies';

/** What the page knows and shows: the server's lists as last fetched, and the operator's place in them. */
export const state = {
  pending: [] as PauseView[],
  recent: [] as RecentView[],
  fetchedAt: Date.now(),
  selected: undefined as string | undefined,
  checked: new Set<string>(),
  tab: 'pending' as Tab,
  /** The question the detail was last built for. */
  detailFor: undefined as string | undefined,
  recentSelected: undefined as string | undefined,
  /** What the recent detail was last built for (token, status, outcome, run status). */
  recentDetailFor: undefined as string | undefined,
  /** What the signed-in caller may do: only an admin is offered what only an admin may do. */
  access: null as SessionResponse['access'],
};

/** Questions answered from this page: the feed's echo of them is not announced again. */
export const answeredHere = new Set<string>();

/** A question's age now, from the server's age at the last fetch. */
export const ageOf = (pause: PauseView) => pause.ageMs + (Date.now() - state.fetchedAt);

/** A deadline's time left now, from the server's at the last fetch. */
export const msLeftOf = (deadline: { msLeft: number }) =>
  deadline.msLeft - (Date.now() - state.fetchedAt);

// Set by the boot to the queue's render: the detail and the feed, which the queue imports,
// redraw through it without importing the queue back.
let redraw = (): void => {};

/** Sets what {@link changed} calls. */
export function onChange(draw: () => void): void {
  redraw = draw;
}

/** Redraws the page from the state. */
export function changed(): void {
  redraw();
}
