-- Written by klue-viz 0.1.0 (schema version 1, commit e85bfa8): sqlite3 .dump of a database it created.
BEGIN TRANSACTION;
CREATE TABLE annotations (
	id INTEGER NOT NULL, 
	task VARCHAR(16) NOT NULL, 
	guid VARCHAR(200) NOT NULL, 
	turn INTEGER DEFAULT '-1' NOT NULL, 
	run VARCHAR(200) NOT NULL, 
	annotator VARCHAR(100) NOT NULL, 
	tags TEXT DEFAULT '[]' NOT NULL, 
	note TEXT DEFAULT '' NOT NULL, 
	gold_wrong BOOLEAN DEFAULT 0 NOT NULL, 
	corrected_label TEXT, 
	updated_at VARCHAR(40) NOT NULL, 
	version INTEGER DEFAULT '1' NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT one_record_per_key UNIQUE (task, guid, turn, run, annotator)
);
INSERT INTO "annotations" VALUES(1,'ner','klue-ner-v1_dev_00001-nsmc',-1,'bert-crf','지민','["boundary"]','경계',0,NULL,'2026-11-30T21:45:15.489+00:00',1);
INSERT INTO "annotations" VALUES(2,'wos','wos-v1_dev_00000',2,'trade','지민','["missed update"]','',0,NULL,'2026-11-30T21:45:15.492+00:00',1);
CREATE TABLE custom_tags (
	task VARCHAR(16) NOT NULL, 
	tag VARCHAR(100) NOT NULL, 
	PRIMARY KEY (task, tag)
);
INSERT INTO "custom_tags" VALUES('ner','my tag');
CREATE TABLE schema_version (
	version INTEGER NOT NULL
);
INSERT INTO "schema_version" VALUES(1);
CREATE INDEX annotations_by_task_run ON annotations (task, run);
COMMIT;
