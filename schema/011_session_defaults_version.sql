-- 011_session_defaults_version.sql — sessions stored before issue 24 keep
-- the tokenizers they were created with.
--
-- Issue 24 changed what the options' "auto" resolves to: the recall
-- tokenizer of a ja target (zh -> ja-mecab) and BLEU's tokenizer (always
-- 13a -> sacreBLEU -l's choice: zh for zh, ja-mecab for ja). A session
-- stored before has word history and BLEU sufficient statistics counted
-- with the old ones; resolving "auto" anew would mix two tokenizations in
-- its history and running totals without a word. So every session stored
-- without the option "defaults" (all of them: no release before this one
-- wrote it) gets defaults 1, the old resolution (core/config.h
-- AM_DEFAULTS_V1); new sessions store the current version at creation
-- (am_sessions_pin_defaults). TER needs nothing: its zh/ja/ko defaults are
-- stored at creation and old sessions lack them, so they keep the old TER.
UPDATE sessions SET options = json_set(options, '$.defaults', 1)
WHERE json_type(options, '$.defaults') IS NULL;
