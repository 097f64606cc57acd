-- CREATE SCHEMA "x_langgraph" removed: migrate() creates it first, for its migrations table.
CREATE TABLE "x_langgraph"."checkpoint_blobs" (
	"thread_id" text collate "C" NOT NULL,
	"checkpoint_ns" text collate "C" DEFAULT '' NOT NULL,
	"channel" text NOT NULL,
	"version" text NOT NULL,
	"type" text NOT NULL,
	"blob" "bytea",
	CONSTRAINT "checkpoint_blobs_thread_id_checkpoint_ns_channel_version_pk" PRIMARY KEY("thread_id","checkpoint_ns","channel","version")
);
--> statement-breakpoint
CREATE TABLE "x_langgraph"."checkpoint_writes" (
	"thread_id" text collate "C" NOT NULL,
	"checkpoint_ns" text collate "C" DEFAULT '' NOT NULL,
	"checkpoint_id" text collate "C" NOT NULL,
	"task_id" text collate "C" NOT NULL,
	"idx" integer NOT NULL,
	"task_path" text collate "C" DEFAULT '' NOT NULL,
	"channel" text NOT NULL,
	"type" text NOT NULL,
	"blob" "bytea" NOT NULL,
	CONSTRAINT "checkpoint_writes_thread_id_checkpoint_ns_checkpoint_id_task_id_idx_pk" PRIMARY KEY("thread_id","checkpoint_ns","checkpoint_id","task_id","idx")
);
--> statement-breakpoint
CREATE TABLE "x_langgraph"."checkpoints" (
	"thread_id" text collate "C" NOT NULL,
	"checkpoint_ns" text collate "C" DEFAULT '' NOT NULL,
	"checkpoint_id" text collate "C" NOT NULL,
	"parent_checkpoint_id" text collate "C",
	"checkpoint" jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "checkpoints_thread_id_checkpoint_ns_checkpoint_id_pk" PRIMARY KEY("thread_id","checkpoint_ns","checkpoint_id")
);
