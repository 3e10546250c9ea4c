"""Writes a tiny word-level tokenizer (tokenizer.json + tokenizer_config.json)
to the directory given, offline, for aiperf's --tokenizer.

aiperf needs a tokenizer to build prompts and count output tokens, and its
built-in one downloads data. A word-level tokenizer counts each word the
example server streams as one token, so aiperf's count can be held against
the server's. Run with the Python of aiperf's venv (tokenizers and
transformers come with aiperf).
"""
import sys

from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

out = sys.argv[1]
corpus = [
    "the quick brown fox jumps over the lazy dog",
    "and then it rests under a tree",
]
tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer.train_from_iterator(
    corpus, trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"])
)
PreTrainedTokenizerFast(
    tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
).save_pretrained(out)
print(f"aiperf tokenizer in {out}")
