-- 012_vocabulary_tokenizer.sql — a background vocabulary records the
-- recall tokenizer its words were counted with, and the languages of the
-- memory they were counted from (issue 24).
--
-- A TMX vocabulary's words are counted by the recall tokenizer; a session
-- looks its own tokens up in it. Counted with one tokenizer (zh
-- characters) and read by another (a ja session on MeCab), almost no word
-- is found and the novel-word results are silently wrong, so a session is
-- now refused a vocabulary whose tokenizer differs from its own
-- (api_sessions.c).
--
--   tokenizer    the recall tokenizer's name (core/tok.c am_tok_name);
--                NULL for a "count word" list, whose words are the
--                uploader's (not checked).
--   lang         the counted language side of a TMX memory (NULL: a list).
--   source_lang  the memory's source language checked at upload (NULL:
--                none given).
--
-- Rows stored before: the upload did not record what counted them. Before
-- issue 24 a TMX memory was counted with the "auto" recall tokenizer of
-- defaults 1 for the counted language (am_xliff_tmx_rcfg over a default
-- am_config: am_tok_default_for_lang, zh for zh and ja, char for th, lo,
-- km and my, intl otherwise), and that language was not stored. They get
-- the marker 'auto:1', which the check resolves as that rule for the
-- session's target language (server/api/api_vocab.c
-- am_api_vocab_tokenizer_check): a pre-issue-24 ja vocabulary (zh
-- characters) is then refused by a new ja session (ja-mecab) and accepted
-- by one created before (defaults 1). Count lists stored before get the
-- marker too: which rows were lists was not recorded either.
ALTER TABLE vocabularies ADD COLUMN tokenizer TEXT;
ALTER TABLE vocabularies ADD COLUMN lang TEXT;
ALTER TABLE vocabularies ADD COLUMN source_lang TEXT;
UPDATE vocabularies SET tokenizer = 'auto:1';
