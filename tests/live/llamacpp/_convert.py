"""Run a llama.cpp release's convert_hf_to_gguf.py on a model made by the lab, naming the pre-tokenizer.

    python _convert.py LLAMA_CPP_DIR HF_DIR [converter options…]

The converter recognises a BPE pre-tokenizer by hashing the tokens of a test string and refuses any it does
not know ("BPE pre-tokenizer was not recognized"). The lab's tokenizer is trained here, byte-level with GPT-2's
split, which is llama.cpp's `qwen2` pre-tokenizer: this wrapper answers that one question for the converter
(`TextModel.get_vocab_base_pre`) and runs it unchanged. Qwen2's `set_vocab` tries SentencePiece first and falls
back to the byte-level vocabulary on FileNotFoundError; the release imports sentencepiece before looking for
`tokenizer.model`, so without that package the fallback never comes: the wrapper looks for the file first.
Used only by the tests, on models made by the tests.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path


def main() -> None:
    src = Path(sys.argv[1])
    sys.path[:0] = [str(src), str(src / "gguf-py")]
    import conversion.base as base  # the release's own converter package

    base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "qwen2"
    sentencepiece = base.TextModel._create_vocab_sentencepiece

    def no_sentencepiece_model(self):
        if not (self.dir_model / "tokenizer.model").is_file():
            raise FileNotFoundError(self.dir_model / "tokenizer.model")
        return sentencepiece(self)

    base.TextModel._create_vocab_sentencepiece = no_sentencepiece_model
    sys.argv = [str(src / "convert_hf_to_gguf.py"), *sys.argv[2:]]
    runpy.run_path(str(src / "convert_hf_to_gguf.py"), run_name="__main__")


if __name__ == "__main__":
    main()
