ALTER TABLE "aura"."paused_states" ADD COLUMN "remind_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "reminded_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "escalate_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "escalate_names" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "escalate_roles" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "escalated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "quorum" integer;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "quorum_declines" integer;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "approvers" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "decliners" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "aura"."paused_states" ADD COLUMN "approved_content" text;--> statement-breakpoint
CREATE TABLE "aura"."approvals" (
	"token" text NOT NULL,
	"operator" text NOT NULL,
	"action" text NOT NULL,
	"content" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "approvals_token_operator_pk" PRIMARY KEY("token","operator")
);
--> statement-breakpoint
ALTER TABLE "aura"."approvals" ADD CONSTRAINT "approvals_token_paused_states_token_fk" FOREIGN KEY ("token") REFERENCES "aura"."paused_states"("token") ON DELETE cascade ON UPDATE no action;
