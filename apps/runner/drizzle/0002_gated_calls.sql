CREATE TABLE "runner"."tool_effects" (
	"key" text PRIMARY KEY NOT NULL,
	"tool" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"invocations" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runner"."gated_results" (
	"token" text PRIMARY KEY NOT NULL,
	"tool" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"edited" boolean NOT NULL,
	"result" text NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL
);
