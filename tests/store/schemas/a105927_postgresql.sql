-- The schema docket had before issues 9 and 11 (commit a105927): that code's metadata compiled for PostgreSQL.
-- tests/store/test_migrations.py builds an old database from it. Statements end with ';' and a blank line.

CREATE TABLE adherence_runs (
	id VARCHAR(32) NOT NULL,
	created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	record_id VARCHAR(200) NOT NULL,
	turn INTEGER,
	mode VARCHAR(16) NOT NULL,
	ruleset VARCHAR(200) NOT NULL,
	ruleset_version VARCHAR(80) NOT NULL,
	status VARCHAR(16) NOT NULL,
	total_ms FLOAT NOT NULL,
	tiers JSON NOT NULL,
	models JSON NOT NULL,
	source VARCHAR(16) NOT NULL,
	annotator VARCHAR(200),
	prompt_version VARCHAR(40) NOT NULL,
	docket_version VARCHAR(40) NOT NULL,
	PRIMARY KEY (id)
);

CREATE INDEX ix_adherence_runs_record_id ON adherence_runs (record_id);

CREATE TABLE adherence_sessions (
	id_sha256 VARCHAR(64) NOT NULL,
	annotator VARCHAR(200) NOT NULL,
	csrf_token VARCHAR(64) NOT NULL,
	created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	expires_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (id_sha256)
);

CREATE TABLE adherence_tokens (
	id SERIAL NOT NULL,
	name VARCHAR(200) NOT NULL,
	token_sha256 VARCHAR(64) NOT NULL,
	created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	revoked BOOLEAN NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (token_sha256)
);

CREATE TABLE jobs (
	name VARCHAR(200) NOT NULL,
	kind VARCHAR(40) NOT NULL,
	method VARCHAR(40) NOT NULL,
	model VARCHAR(400) NOT NULL,
	options JSON NOT NULL,
	source TEXT NOT NULL,
	docket_version VARCHAR(40) NOT NULL,
	created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (name)
);

CREATE TABLE review_reviewers (
	id SERIAL NOT NULL,
	name VARCHAR(120) NOT NULL,
	token_hash VARCHAR(64) NOT NULL,
	is_admin BOOLEAN NOT NULL,
	blind BOOLEAN NOT NULL,
	active BOOLEAN NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (name),
	UNIQUE (token_hash)
);

CREATE TABLE review_tasks (
	id SERIAL NOT NULL,
	job VARCHAR(200) NOT NULL,
	kind VARCHAR(40) NOT NULL,
	item_key VARCHAR(600) NOT NULL,
	payload JSON NOT NULL,
	required_reviews INTEGER NOT NULL,
	blind BOOLEAN NOT NULL,
	status VARCHAR(20) NOT NULL,
	revision INTEGER NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	closed_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (id),
	CONSTRAINT uq_review_task_item UNIQUE (job, kind, item_key)
);

CREATE INDEX ix_review_tasks_job ON review_tasks (job);

CREATE INDEX ix_review_tasks_status ON review_tasks (status);

CREATE TABLE schema_version (
	version SERIAL NOT NULL,
	name VARCHAR(200) NOT NULL,
	applied_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (version)
);

CREATE TABLE adherence_results (
	id VARCHAR(32) NOT NULL,
	run_id VARCHAR(32) NOT NULL,
	rule_id VARCHAR(200) NOT NULL,
	rule_version VARCHAR(80) NOT NULL,
	tier VARCHAR(8) NOT NULL,
	status VARCHAR(16) NOT NULL,
	explanation TEXT NOT NULL,
	span JSON,
	fix TEXT NOT NULL,
	turn INTEGER,
	cached BOOLEAN NOT NULL,
	truncated BOOLEAN NOT NULL,
	error TEXT NOT NULL,
	call JSON,
	PRIMARY KEY (id),
	FOREIGN KEY(run_id) REFERENCES adherence_runs (id)
);

CREATE INDEX ix_adherence_results_rule_id ON adherence_results (rule_id);

CREATE INDEX ix_adherence_results_run_id ON adherence_results (run_id);

CREATE TABLE judgments (
	id SERIAL NOT NULL,
	job VARCHAR(200) NOT NULL,
	qid VARCHAR(200) NOT NULL,
	docid VARCHAR(400) NOT NULL,
	query TEXT NOT NULL,
	text TEXT NOT NULL,
	gold INTEGER,
	method VARCHAR(40) NOT NULL,
	label INTEGER,
	grade INTEGER,
	confidence DOUBLE PRECISION,
	decided_by VARCHAR(40) NOT NULL,
	rounds INTEGER NOT NULL,
	transcript JSON NOT NULL,
	usage JSON NOT NULL,
	model VARCHAR(400) NOT NULL,
	prompt_hash VARCHAR(80) NOT NULL,
	config JSON NOT NULL,
	parse_failures INTEGER NOT NULL,
	invalid_evidence INTEGER NOT NULL,
	docket_version VARCHAR(40) NOT NULL,
	created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	updated_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT uq_judgment_pair UNIQUE (job, qid, docid),
	FOREIGN KEY(job) REFERENCES jobs (name)
);

CREATE INDEX ix_judgments_job ON judgments (job);

CREATE TABLE review_assignments (
	id SERIAL NOT NULL,
	task_id INTEGER NOT NULL,
	reviewer_id INTEGER NOT NULL,
	assigned_by VARCHAR(120) NOT NULL,
	assigned_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT uq_review_assignment UNIQUE (task_id, reviewer_id),
	FOREIGN KEY(task_id) REFERENCES review_tasks (id),
	FOREIGN KEY(reviewer_id) REFERENCES review_reviewers (id)
);

CREATE INDEX ix_review_assignments_reviewer_id ON review_assignments (reviewer_id);

CREATE INDEX ix_review_assignments_task_id ON review_assignments (task_id);

CREATE TABLE review_decisions (
	id SERIAL NOT NULL,
	task_id INTEGER NOT NULL,
	reviewer_id INTEGER NOT NULL,
	label INTEGER NOT NULL,
	grade INTEGER,
	note TEXT NOT NULL,
	blind BOOLEAN NOT NULL,
	seconds FLOAT,
	source VARCHAR(40) NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id),
	FOREIGN KEY(task_id) REFERENCES review_tasks (id),
	FOREIGN KEY(reviewer_id) REFERENCES review_reviewers (id)
);

CREATE INDEX ix_review_decisions_reviewer_id ON review_decisions (reviewer_id);

CREATE INDEX ix_review_decisions_task_id ON review_decisions (task_id);

CREATE TABLE review_web_sessions (
	id_hash VARCHAR(64) NOT NULL,
	reviewer_id INTEGER NOT NULL,
	csrf_token VARCHAR(64) NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id_hash),
	FOREIGN KEY(reviewer_id) REFERENCES review_reviewers (id)
);

CREATE INDEX ix_review_web_sessions_reviewer_id ON review_web_sessions (reviewer_id);

CREATE TABLE adherence_feedback (
	id SERIAL NOT NULL,
	result_id VARCHAR(32) NOT NULL,
	rule_id VARCHAR(200) NOT NULL,
	tier VARCHAR(8) NOT NULL,
	action VARCHAR(16) NOT NULL,
	reason TEXT NOT NULL,
	fixed_text TEXT,
	annotator VARCHAR(200) NOT NULL,
	created_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
	PRIMARY KEY (id),
	FOREIGN KEY(result_id) REFERENCES adherence_results (id)
);

CREATE INDEX ix_adherence_feedback_result_id ON adherence_feedback (result_id);

CREATE INDEX ix_adherence_feedback_rule_id ON adherence_feedback (rule_id);
