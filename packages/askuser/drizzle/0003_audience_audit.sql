CREATE TABLE "aura"."audit_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"chain" text NOT NULL,
	"seq" bigint NOT NULL,
	"kind" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"token" text,
	"body" text NOT NULL,
	"prev" text NOT NULL,
	"hash" text NOT NULL,
	"sig" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "aura"."audit_heads" (
	"chain" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "aura"."audit_sealed" (
	"chain" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "aura"."pending_audience" (
	"audience_key" text NOT NULL,
	"priority" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"token" text NOT NULL,
	CONSTRAINT "pending_audience_token_audience_key_pk" PRIMARY KEY("token","audience_key")
);
--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "audience_names" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "audience_roles" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "requester" text;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "requester_may_not_answer" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "aura"."pending_audience" ADD CONSTRAINT "pending_audience_token_paused_states_token_fk" FOREIGN KEY ("token") REFERENCES "aura"."paused_states"("token") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_entries_chain_seq_idx" ON "aura"."audit_entries" USING btree ("chain","seq");--> statement-breakpoint
CREATE INDEX "audit_entries_at_idx" ON "aura"."audit_entries" USING btree ("at","id");--> statement-breakpoint
CREATE INDEX "audit_entries_token_idx" ON "aura"."audit_entries" USING btree ("token","id") WHERE "aura"."audit_entries"."token" is not null;--> statement-breakpoint
CREATE INDEX "pending_audience_fifo_idx" ON "aura"."pending_audience" USING btree ("audience_key","priority" DESC NULLS FIRST,"created_at","token");