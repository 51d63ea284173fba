"""Real text for the learned detector: public attack prompts and benign text, all pinned.

Every source is a public repository at a pinned commit, with its licence and the
SHA-256 of what is read. ``python bench/detector_data.py fetch`` copies the
pinned files into ``bench/data/detector/`` (ignored by git; nothing of them is
committed). Benign text of this repository (docs and READMEs, commit messages)
is read with ``git show`` at :data:`DOCS_COMMIT`, so later edits do not move
the training set; the standard library's docstrings (PSF licence) come from
the running interpreter.

Each source has a *use*:

- ``train``: its texts are split into train (60 %), dev (20 %, calibration)
  and test (20 %, reported only) by a hash of a *group* (a source file, an
  attack technique, an intent, a goal), so no group is on two sides;
- ``heldout``: the whole source is test data, never trained on or calibrated
  with (the split "by source");
- ``report``: a source without a licence that allows training (Tensor Trust,
  REALTALK) or whose licence would bind the weights (CC BY-SA: the Universal
  Dependencies sentences in Japanese and Russian): measured only; REALTALK's
  odd chats calibrate, its even chats are reported.

Not used, ever (kept for independent evaluation): garak, spikee, BIPIA,
AgentDojo, LoCoMo, PersonaChat, XPersona, awesome-cursorrules,
everything-claude-code; nor GPL sources (promptmap).

Usage::

    python bench/detector_data.py fetch [--from NAME=GITDIR ...]
    python bench/detector_data.py verify
"""

# ruff: noqa: E501 (pinned digests)
from __future__ import annotations

import argparse
import ast
import csv
import fnmatch
import gzip
import hashlib
import io
import json
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data" / "detector"

DOCS_COMMIT = "d869c8a"
"""The commit of this repository whose docs, READMEs and commit messages are benign text."""

SPLITS = ("train", "dev", "test", "heldout")


@dataclass(frozen=True)
class Text:
    """One real text: its *source*, *split*, *label* (1 attack), *category*, *language*."""

    source: str
    split: str
    label: int
    text: str
    category: str
    language: str = "en"


SOURCES: list[dict[str, object]] = [
    {
        "name": "GPTFuzz",
        "repository": "https://github.com/sherdencooper/GPTFuzz",
        "commit": "1eddeb565740ae311b5f4950492b011a6f866fe7",
        "licence": "MIT",
        "label": 1,
        "use": "train",
        "reader": "gptfuzz",
        "files": {
            "datasets/prompts/GPTFuzzer.csv": (
                "e4abf25343b4adb991dd8ddc6189c038f26a6e74064d792cced69f56f71577fc"
            ),
        },
    },
    {
        "name": "Prompt-Injection-Everywhere",
        "repository": "https://github.com/TakSec/Prompt-Injection-Everywhere",
        "commit": "9b69c8ae7958f68d562d484103a7b14b66983d63",
        "licence": "MIT",
        "label": 1,
        "use": "train",
        "reader": "whole_file",
        "files": {
            "Basic-Prompt-Injection-v1.txt": (
                "03e1a48a3b9511c96fe854e5e340cf18122952cc1fcba91937f9a55793dd253e"
            ),
            "Basic-Prompt-Injection-v2.txt": (
                "b1b6882282f14eb4239e49433e47090beaf024a7152893832a98057e93c7c68a"
            ),
            "Prompt-Injection-SQLi.txt": (
                "6db4521f66439db49f8f58207b195d4da9b6f20eacbb1ddb7208acade0bc62af"
            ),
            "Prompt-Injection-XSS.txt": (
                "5240dafa59f3c53357c9d6b6c12eb02495f516a05eb16291d94ae26207e6eb80"
            ),
            "Prompt-Leak-v1.txt": (
                "bf5eb249c8b68481bb0e6663d9b84e9abd336f8e6f2e71b4cdc85036f5ee7e75"
            ),
            "Prompt-Leak-v2.txt": (
                "a116583a2ed00458ca8e3fb23e1141983c3105027fde418978418a25c176c5c6"
            ),
        },
    },
    {
        "name": "CyberSecEval",
        "repository": "https://github.com/meta-llama/PurpleLlama",
        "commit": "4be64c3a24442b51c76175e6ec67722cc3f5fe38",
        "licence": "MIT (CybersecurityBenchmarks/LICENSE)",
        "label": 1,
        "use": "train",
        "reader": "cyberseceval",
        "files": {
            "CybersecurityBenchmarks/datasets/prompt_injection/prompt_injection.json": (
                "069e4d5d36f6d19f972a3bbc65df840cc729354f89358a9031aeb44d95b18a9a"
            ),
            "CybersecurityBenchmarks/datasets/prompt_injection/"
            "prompt_injection_multilingual_machine_translated.json": "f018adfc7b1f766f98ce4dd4c8e34e97a8a88f402a2b63576652027e02c2a15f",
        },
    },
    {
        "name": "CyberSecEval system prompts",
        "repository": "https://github.com/meta-llama/PurpleLlama",
        "commit": "4be64c3a24442b51c76175e6ec67722cc3f5fe38",
        "licence": "MIT (CybersecurityBenchmarks/LICENSE)",
        "label": 0,
        "use": "train",
        "reader": "cyberseceval_system",
        "category": "system_prompts",
        "files": {
            "CybersecurityBenchmarks/datasets/prompt_injection/prompt_injection.json": (
                "069e4d5d36f6d19f972a3bbc65df840cc729354f89358a9031aeb44d95b18a9a"
            ),
            "CybersecurityBenchmarks/datasets/prompt_injection/"
            "prompt_injection_multilingual_machine_translated.json": "f018adfc7b1f766f98ce4dd4c8e34e97a8a88f402a2b63576652027e02c2a15f",
        },
    },
    {
        "name": "JailbreakBench",
        "repository": "https://github.com/JailbreakBench/artifacts",
        "commit": "909e68c01d94222b8ad2e397a017e2e12e2adb73",
        "licence": "MIT",
        "label": 1,
        "use": "train",
        "reader": "jailbreaks",
        "globs": {
            "attack-artifacts/PAIR/black_box/*.json": "5c619bb1af045fe95698e0a30e6a837d8435ada31b234ad5ad2c16af04db1920",
            "attack-artifacts/JBC/manual/*.json": "c80e36435922e7560c44df70d844ec98cee83cb2eee7b8b9d53e0292f072ff50",
            "attack-artifacts/GCG/*/*.json": "7bda26a2d74df4835749c675f707ab2c3c7e71755f51ce64bd5bbb9b3b41afd9",
        },
    },
    {
        "name": "llm-adaptive-attacks",
        "repository": "https://github.com/tml-epfl/llm-adaptive-attacks",
        "commit": "7787faaf8b6fdd56e63ec320d5568bd3e35c48c0",
        "licence": "MIT",
        "label": 1,
        "use": "heldout",
        "reader": "jailbreaks",
        "globs": {
            "jailbreak_artifacts/exps_*.json": "d5ec9304c6f56a4db94ffc4ad27d54cc97ba513b308833b394e8b8ff3390da8d"
        },
    },
    {
        "name": "Tensor Trust",
        "repository": "https://github.com/HumanCompatibleAI/tensor-trust-data",
        "commit": "e2385ea9cf448c9641b96e2e39f113ed4979a5b0",
        "licence": "none stated (no LICENSE file at this commit): measured, never trained on",
        "label": 1,
        "use": "report",
        "reader": "tensor_trust",
        "files": {
            "benchmarks/hijacking-robustness/v1/hijacking_robustness_dataset.jsonl": "2ad3c2343bbf43cb1924f3ec5d6f830864ce3c879e9832b01d93a991e7e2e680",
            "benchmarks/extraction-robustness/v1/extraction_robustness_dataset.jsonl": (
                "4090f9f57b6df69cc32d7669ac991e3fd53e6e2bb616a5e6f45dac79c183ee4c"
            ),
        },
    },
    {
        "name": "awesome-copilot instructions",
        "repository": "https://github.com/github/awesome-copilot",
        "commit": "ab7544d03d4c49fdd07f5958e1888ad39c4118e2",
        "licence": "MIT",
        "label": 0,
        "use": "train",
        "reader": "markdown",
        "category": "coding_rules",
        "globs": {
            "instructions/*.instructions.md": "e1c3b128aa21283da506d54643c04c4cf1e56792722a3b98476789f7d9682201"
        },
    },
    {
        "name": "awesome-copilot agents",
        "repository": "https://github.com/github/awesome-copilot",
        "commit": "ab7544d03d4c49fdd07f5958e1888ad39c4118e2",
        "licence": "MIT",
        "label": 0,
        "use": "heldout",
        "reader": "markdown",
        "category": "agent_personas",
        "globs": {
            "agents/*.agent.md": "ce48e4a1a745dfda9b5bc34fe36b562d88ac598eaf2f1d1578155f4a7f48507d"
        },
    },
    {
        "name": "hh-rlhf assistant turns",
        "repository": "https://github.com/anthropics/hh-rlhf",
        "commit": "354e5c3cb8960630860dd5774a6ac2a58313bf4d",
        "licence": "MIT",
        "label": 0,
        "use": "train",
        "reader": "hh_rlhf",
        "category": "assistant_chat",
        "files": {
            "harmless-base/test.jsonl.gz": (
                "ebfaaed21162a4de120ae85366075b34425e2a6303fac59b99555002f7016f03"
            )
        },
    },
    {
        "name": "CLINC150",
        "repository": "https://github.com/clinc/oos-eval",
        "commit": "828f8093932c8fe6ca7936c3d2e52903b1c523de",
        "licence": "CC BY 3.0",
        "label": 0,
        "use": "train",
        "reader": "clinc",
        "category": "assistant_requests",
        "files": {
            "data/data_full.json": "36923c3705a59e08fe9c3883d8bc2dd966ef93e22cb78ac41171782a698d56e0"
        },
    },
    {
        "name": "BANKING77",
        "repository": "https://github.com/PolyAI-LDN/task-specific-datasets",
        "commit": "57ec275d8078af65b7731c2a98be812d844a6d6b",
        "licence": "CC BY 4.0",
        "label": 0,
        "use": "heldout",
        "reader": "banking",
        "category": "customer_messages",
        "files": {
            "banking_data/test.csv": "d12d6e3bc4c3103966ae786dc435913c0c563dfa328f5a3646d0e62cfeeb474d"
        },
    },
    {
        "name": "UD Japanese GSD",
        "repository": "https://github.com/UniversalDependencies/UD_Japanese-GSD",
        "commit": "7bc20119f476b552635e0640644e577b6fd3606b",
        "licence": "CC BY-SA 4.0: measured, never trained on (no derived weights under another licence)",
        "label": 0,
        "use": "report",
        "reader": "conllu",
        "category": "encyclopedia_and_blog_sentences",
        "language": "ja",
        "files": {
            "ja_gsd-ud-dev.conllu": "18d266e29336ef619787a928d89d20f2e64188be70d5b37829e3aadc5bb6b841",
            "ja_gsd-ud-test.conllu": "5f50ee6ed45c7ebda3787e593eaf5e9a225f25e53f6b4b32df778031862c843f",
        },
    },
    {
        "name": "UD Russian Taiga",
        "repository": "https://github.com/UniversalDependencies/UD_Russian-Taiga",
        "commit": "3c64a056edcd5c6e2c29b3724d973729c354e016",
        "licence": "CC BY-SA 4.0: measured, never trained on (no derived weights under another licence)",
        "label": 0,
        "use": "report",
        "reader": "conllu",
        "category": "social_media_and_fiction_sentences",
        "language": "ru",
        "files": {
            "ru_taiga-ud-dev.conllu": "d1497731d5cb7162530eb7b278423a103412efa678096f7d456cb57088e12332",
            "ru_taiga-ud-test.conllu": "dec224e1e892153a8a4c83a905d7613c4a318e3e726d96551001eecea4aba3df",
        },
    },
]
"""Every fetched source; ``files`` pins each file's SHA-256, ``globs`` the SHA-256 of
the sorted list of (path, file SHA-256) lines of the files a pattern matches."""

XSAFETY = {
    "repository": "https://github.com/Jarviswang94/Multilingual_safety_benchmark",
    "commit": "8c55b6a6cda594cd550a4921513238a2dd40eb5a",
    "licence": "Apache-2.0",
    "reader": "xsafety",
}
"""XSafety (Wang et al. 2023, "All Languages Matter"): the Chinese Safety-Prompts
translated into nine languages here (its Bengali files are spreadsheets, not read)."""
XSAFETY_TRAINED = ("en", "zh", "ar", "de", "hi")
"""The languages whose goal-hijacking prompts are trained on; the others are held out."""
XSAFETY_FILES = {
    "en/Goal_Hijacking_n.csv": "f744853088c412a25001a4275fc20b51a13af97f9fffadf60e38003fa852a395",
    "en/Mental_Health_n.csv": "c71b953f822f24343e7d42cc964619dd63d5f080c535a395d91abcec82cc62f3",
    "en/commonsense.csv": "c2758123a27635ef721137f9fd15dcbdded2437443e5ab782891fd5ef6256b53",
    "en/Ethics_And_Morality_n.csv": "39bce79d9957c3c6ebaf6d52ad66a89429059e1c2b97b65edc0662a332d542d9",
    "en/Physical_Harm_n.csv": "02165c92dfa8da48cbaef5fd0623ea26292b8028f2d8b25d3d05bebfa9bdbe42",
    "en/Privacy_And_Property_n.csv": "aa363e804987ed1d19c66c3b1125bae6a917b668f83f0dfeb9fc7255d6080383",
    "zh/Goal_Hijacking.csv": "f23d3769ff432022f1eb5b76d9a6cf2f4d4c6a232b8d65df138b91c645ed459e",
    "zh/Mental_Health.csv": "2efb9627feb37e0df3ff48e2c8a8f7845c8ce4e886461aad0743942698728432",
    "zh/commonsense.csv": "2770a1b9c8780609c85bde6cc6b6e5227dd585dae1b001f1ce37285d1f84a31f",
    "zh/Ethics_And_Morality.csv": "13d7cab507aa3500ebf109687dfb8d5d9f317fda410334c7190977428d5dbb18",
    "zh/Physical_Harm.csv": "18155616677cd7d4ba8041e6ec76a5255eabf2a2d3dd87006588001e804c02ed",
    "zh/Privacy_And_Property.csv": "ee2f101ce55d4ad1e77b9bfc9827509a7cab45b056de448eeed702ba93adb4fe",
    "ar/Goal_Hijacking.csv": "b206f27571f919e78fbd17b956127e9d0377f278c5e241cd30bd80342d48895f",
    "ar/Mental_Health.csv": "6a383c29b2e2234f335ac4f10ed4286b59d24692028711de9fa40035a2646166",
    "ar/commonsense.csv": "355ade5d892b49e8e62f0c87648692595adcbdf9a7ef06c3d9c6b6a53322aabd",
    "ar/Ethics_And_Morality.csv": "8dc93a732a78423456b274fb6372bdbaf7507d34d81beefb701ac644992fd8fe",
    "ar/Physical_Harm.csv": "8a8f6ce30d4b8693117b9c4b99578c4a3f9e0edf24994ffa27e94b45c5509216",
    "ar/Privacy_And_Property.csv": "452fa9d874ceef5f70780d4b501b7b07af80b00fae414fd5a17bc6be73769ef0",
    "de/Goal_Hijacking.csv": "aa7a9a7d05132932457b531019d00e29d197cc59cf56ab02b0d4d38501bf0529",
    "de/Mental_Health.csv": "736711e39941e62f619ff7d07e3db2bee2224b75e928bbc6c0d943d246aac944",
    "de/commonsense.csv": "3ca9649895b896063fda72abd03bae7519b663c50f77238f7f607fef8e34266a",
    "de/Ethics_And_Morality.csv": "7e47fbd9c65a20b3925d78b6a1015e5548751be649c80a5c9a2c3dd76bce3946",
    "de/Physical_Harm.csv": "d3ca42d0b54f3e1a68a8e2cd43985765c52583d3f9640355ccfe6e817256dd60",
    "de/Privacy_And_Property.csv": "5b8afe091caf0236b0d74d75d41ad3d3f1711f014ed6ab29ba5a3a6ac83a86d3",
    "hi/Goal_Hijacking.csv": "97417267593353b2f61f4305899800f72b8c0a654ffdd7bcae4db30a08593d82",
    "hi/Mental_Health.csv": "ec0d3a2cd3a4625aba5fd86fa7f34a8422625af1c2bd6732405e18f94279ba58",
    "hi/commonsense.csv": "9c10ce27cdd0a699d30e602c6b62068271ee11d3d54561b02ffd0abffda7fe1e",
    "hi/Ethics_And_Morality.csv": "ce0388c012224c26ee48ab48cbefd5e114531227f17d044e3fb94e042e409863",
    "hi/Physical_Harm.csv": "a8eac6924dc88bfb08491d067344d8b8324e5366191e2e8d82e0c353d88cb61e",
    "hi/Privacy_And_Property.csv": "53a113472e7b1c65e9d096deb875056568d4c3097c885771ffc9904ea003bb5c",
    "fr/Goal_Hijacking.csv": "8d1c1a1c95893faa34a8023bc939054d77c837389c470cdc3855139e1aa3afa6",
    "fr/Mental_Health.csv": "1529b503d0c1c2816b7c3d03221d48de9bd759275c738ad7bb22815d52d3c624",
    "fr/commonsense.csv": "c16d06e361ef4dae0da8ae713c1b544b9bb80b5da6719456a7a5663720b9fbb1",
    "fr/Ethics_And_Morality.csv": "594b47dd8334d5eaa5bfa4680103f8b61b824300aef79e75352ead38bc867565",
    "fr/Physical_Harm.csv": "d635a1b62110849c5ddb4dc2ff02314b5a2b12168503242b847b33cd23b56f6b",
    "fr/Privacy_And_Property.csv": "b7ff0dba309a7c26be9b1f760c0bb3396e1b1a6a1b057ae6dc12d404f2d61b3b",
    "ja/Goal_Hijacking.csv": "eca0d7ab78ac31e5a005aa31c5cb37cab0d521012db0cd110f558c0d9d51430a",
    "ja/Mental_Health.csv": "05d01cca2583b7137b3fa51107fb508cf9bcc94ced2c9f61f895fbaa6857e7ef",
    "ja/commonsense.csv": "f7eba7c62cbeeb6458982c03d5542ac129b624da7e5fbf2f57c31959071196f6",
    "ja/Ethics_And_Morality.csv": "b8c62c27da6b64a121743552b09dd05734c3995d45339b4ab24ff8818a7c95ce",
    "ja/Physical_Harm.csv": "1eff444ea98d6a85dae5403821241dc32803c48d39737f165fac104b76055a9d",
    "ja/Privacy_And_Property.csv": "3b859829fc1a9bcd5b7b5c7802f1a8a118263a8eeb22fe0b0921e8b7f025d587",
    "ru/Goal_Hijacking.csv": "b2786975de0379e9056437a966437f7c627a7ec8c4169141c12d8912f69117aa",
    "ru/Mental_Health.csv": "ca9fed426e32a0fe81f75717fc31f8d0f49d3b85e48d5e26c35adf1cbedddbec",
    "ru/commonsense.csv": "3c79a7bd19c662b31ae997b7677ea607a1b3c7d345e96461f071b08337e81f3f",
    "ru/Ethics_And_Morality.csv": "94eb4f97885202e5c8de399c4bc97c92076b71a7ffd00c2c8079dcb6eb0b9e9d",
    "ru/Physical_Harm.csv": "3408f3ff1b1844ada553941a1516d682d3b10ac19386ee4abb0ca4b536f627e9",
    "ru/Privacy_And_Property.csv": "a49452805f73930626242921e3dba53595bf678bdf743792c3aa5f8c966a6f6a",
    "sp/Goal_Hijacking.csv": "c6c944660b21143bc413641392e98715d433bb45640f39bf442503ddc8b27cac",
    "sp/Mental_Health.csv": "fc525258bca0262f19a37d23400660d98cad97dad99183e9f4f1d694ac45c22d",
    "sp/commonsense.csv": "6f3efce4af8599d601b1f8761f3d63343d16ee58ebb21192792da523f3541399",
    "sp/Ethics_And_Morality.csv": "340dce0af5a32ef01c1e0a5d15af23788598b11a6c9ecbe69da789bd67fb3418",
    "sp/Physical_Harm.csv": "b1ad3d194042d18d24b5bfe801366c8f8c04777756239dfaf53f7ab3edba7f43",
    "sp/Privacy_And_Property.csv": "674974403e47408f2571f6f30ccef802f44fada59850d0f1ee47ed3cfd0e130f",
}


def _xsafety(
    name: str,
    label: int,
    use: str,
    category: str,
    kinds: tuple[str, ...],
    languages: tuple[str, ...],
) -> dict[str, object]:
    files = {
        path: digest
        for path, digest in XSAFETY_FILES.items()
        if path.split("/")[0] in languages and path.split("/")[1].startswith(kinds)
    }
    return {**XSAFETY, "name": name, "label": label, "use": use, "category": category,
            "files": files}  # fmt: skip


_ALL = ("en", "zh", "ar", "de", "hi", "fr", "ja", "ru", "sp")
_HELD = tuple(language for language in _ALL if language not in XSAFETY_TRAINED)
SOURCES += [
    _xsafety("XSafety goal hijacking", 1, "train", "goal_hijacking", ("Goal_",), XSAFETY_TRAINED),
    _xsafety("XSafety goal hijacking, other languages", 1, "heldout", "goal_hijacking",
             ("Goal_",), _HELD),
    _xsafety("XSafety everyday questions", 0, "train", "everyday_questions",
             ("commonsense", "Ethics_", "Physical_", "Privacy_"), _ALL),
    _xsafety("XSafety personal statements", 0, "heldout", "personal_statements",
             ("Mental_",), _ALL),
]  # fmt: skip


TATOEBA = {
    "repository": "https://github.com/facebookresearch/LASER",
    "commit": "74bc6ae7ffb7cba670fe0f428d0ede9f666fb821",
    "licence": "CC BY 2.0 FR (Tatoeba sentences, extract of 2018-11-17 in LASER's test "
    "set; LASER's code is BSD)",
    "label": 0,
    "reader": "tatoeba",
    "category": "everyday_sentences",
}
"""Tatoeba's everyday sentences ("I have two cats.", "Tom lives in Boston.") in 112
languages, up to 1,000 a language, as LASER ships them for its similarity test: benign
first- and third-person text in the languages whose personal notes the detector held."""
TATOEBA_DIR = "data/tatoeba/v1/"
TATOEBA_FILES = {
    "tatoeba.afr-eng.afr": "7bb9e073ad8422d6bfdec7c9ebdcef8ac486e72b237200e447923a8b921a0a56",
    "tatoeba.amh-eng.amh": "ffd4b09d5d677313e82bb15e557e722d6585d0d5ac81c47dc10690d6ce8e2d8f",
    "tatoeba.ang-eng.ang": "f489d684ff088a0d0d39aef37c442fd2e654c0b1ec82e26e52967f9d25a4f38d",
    "tatoeba.ara-eng.ara": "e67a0ae072b79cd9e8eb09f166c3bc0b23488d39f5720f2ee0a8350ae17b719f",
    "tatoeba.arq-eng.arq": "cf0b5fc39a19e328f2b491e9458667756a95184aa6f04535d544fd6f7748f16d",
    "tatoeba.arz-eng.arz": "49e2a2a33eda3b0fe46f073880b17f2d6f1dac24b59386a82ae3567d6cca56da",
    "tatoeba.ast-eng.ast": "6e2106cdff0105dc4385129d98cc64074272e00ea68f130417e8d0fde87b01ba",
    "tatoeba.awa-eng.awa": "c9c7fcb5a3f2efec0ff7f1729567c0a4d407d9354bfc3afa90f1ec590677a719",
    "tatoeba.aze-eng.aze": "b0daccaaebeaa60ad24dcf42597a93afd238d8c263618db7c5ed6babe7d663e6",
    "tatoeba.bel-eng.bel": "f474ca183685978017e7fb7ee71a018c15b2d64c988c27093c73f9fb24e653b6",
    "tatoeba.ben-eng.ben": "ac3385695d6a6c7e5d18e38ad4b8b7d3780f3df23dd0ff3f539071b8269a8613",
    "tatoeba.ber-eng.ber": "cfa3f8751c0944ab9b2a1420918b04fcf8857128bfeae8fe7e7e8f4fc55ac7f0",
    "tatoeba.bos-eng.bos": "66f1cf9d092598419973754da7de54c215b816803536687c44781e2db83936bb",
    "tatoeba.bre-eng.bre": "1d7f931af5e47f7a8a690992419a263706643f5fb7820ebbdb88ad4232d88475",
    "tatoeba.bul-eng.bul": "f9fa90cf3599d8c87f7a6ed22f5d648e3ce6687c705656a8c8ea088d891f79d5",
    "tatoeba.cat-eng.cat": "512c42703dc6ff6c98ff1456c7a9d54d6eb4be4f4b4bf441fa27ca1dd30ecc55",
    "tatoeba.cbk-eng.cbk": "912143ae56184420e5c158e93c2caaf0056c2ffaf1e7cf85dce0b5d1c7015def",
    "tatoeba.ceb-eng.ceb": "767be046e4361601a950c0d3a85831305c2d7c809f6f5786866d46b8111c4c4b",
    "tatoeba.ces-eng.ces": "0ca1f07a72f547df79288f0c6a1642176009d0b878a75534ed018fe715946f6b",
    "tatoeba.cha-eng.cha": "235129c1e28ae24d9ab582e5e25376572244cb15f46a1b886b262efaab54c36c",
    "tatoeba.cmn-eng.cmn": "965d033966fcd186c89741ad49ab4b0a0b2bbd33e02666635ff3b2be23c1ac1f",
    "tatoeba.cor-eng.cor": "ffbbe24eabf47eb2b222c2352eb4ea12fd9e02aa4f137aacc6f087f30a78f76f",
    "tatoeba.csb-eng.csb": "65348b9235480a70bba9a91c6b131149654b5589b0cab107d287a1c3b46d5662",
    "tatoeba.cym-eng.cym": "9b39ea9bd8088c7636731690eca89c5198efaea51152d6b16aad4b5b7347f50f",
    "tatoeba.dan-eng.dan": "8d8b3c0d8156532ca81a11e5e12c7782e6beb9e29db3f40e46ddcf963dcae650",
    "tatoeba.deu-eng.deu": "edfa6f75a42554df388f45891735d5e4214158a99def4b73b5908af4a3054551",
    "tatoeba.dsb-eng.dsb": "cb328fa5948d7d9394fbf3695fb7d0dfd12ce3f21082741fb9010923b0ada8f7",
    "tatoeba.dtp-eng.dtp": "d61a4559f6a0d251220a968e82697a36276cabee8c315c0b6f5aac72624a532d",
    "tatoeba.ell-eng.ell": "4fb3d3d30bdafd15100dfad5c4680f8f2ed5ca87ed0a6122e2fe2aa21fee65e8",
    "tatoeba.epo-eng.epo": "a0f49a8402248a2334a332227fa841fead2c1c21c4c2ed30fd5e912256ba2f78",
    "tatoeba.est-eng.est": "94856999ef35e5357502d7ecf50419d0108b99270e507d9c57f8b283bd1be9c5",
    "tatoeba.eus-eng.eus": "4255fb70a6c268b09fcc59a9b308f0fcaaf45ef45e66fc55bf3c80eac4d8c97b",
    "tatoeba.fao-eng.fao": "299abb1658b865ae6518f88f10ced23c13b3dc5063118899c457ab4e38d0829d",
    "tatoeba.fin-eng.fin": "8db3c734f755d578445947f1182f40faf2a9a0eca37561dd248717c088802d60",
    "tatoeba.fra-eng.fra": "644172ff9642fefa9e41c29b7d6f44196518e84350dc44d4992e943c0cca92b6",
    "tatoeba.fry-eng.fry": "2fc95443e777f6a8866241f024ac43e79ed07aa1e782a3efb13a66fc3d7866d8",
    "tatoeba.gla-eng.gla": "58a3647950c07f9094777300c8b59520bfae2508fd4c5a57685367428529518d",
    "tatoeba.gle-eng.gle": "d5f33fb7a98aa616141bb74647b8856559bf9ec2e8346e0e88449d50709ab603",
    "tatoeba.glg-eng.glg": "b165fd7ca25343381c63a2f0caf06df57f12797e818e550a2bbcb7928cae7d4a",
    "tatoeba.gsw-eng.gsw": "6007a6e277321ea9ed1f1cf50048c6e28d4817dc004ac881e857c42e132679b2",
    "tatoeba.heb-eng.heb": "4a07ca4b8a6fb7ab499791573a2454730f47acbe209359d7b9372a9f6094a102",
    "tatoeba.hin-eng.hin": "15e4fb0a394be4438319f1d6955d1aea226e2a8c5ad38798b23b76ae43d742ed",
    "tatoeba.hrv-eng.hrv": "be6bb15973e3c8ebd23584e8867bc5182b390403575d62c78d6c42b5e7b92fcf",
    "tatoeba.hsb-eng.hsb": "05ddb2c8866c51091955609b8ec60da073c9e94ba948f8d2d9320e8403bef52f",
    "tatoeba.hun-eng.hun": "56bd0682be8c1db6568313650b3310d641cc8d0019d12dd7caf201302350eeac",
    "tatoeba.hye-eng.hye": "5030d8ad769e6fd15612a9a6af7be51ae9d6c262820c1d6734bfe53b883ae9f2",
    "tatoeba.ido-eng.ido": "6751b92a655f6324894efd667e9f1736fc31a5b9459e54af77e10d22df23810d",
    "tatoeba.ile-eng.ile": "a5e4f9304110c7b9eda5833e1801f1563bdcd042e56a6e9fa3f84b0553bbb397",
    "tatoeba.ina-eng.ina": "f4f5952c0b009dafe02ac4b393bd21c250b6662f2e6ebe9f3a6e4589c07746ca",
    "tatoeba.ind-eng.ind": "4f03cd70cba071f746eacd3ebf6b60fd5a8377ce18b4cc52edec6721f05f352a",
    "tatoeba.isl-eng.isl": "fd0ba00d801bc40b94f6f013d09eae32a3bf2aa0af5f8a52d27a17b3eccb662a",
    "tatoeba.ita-eng.ita": "9b3f369d0ed92273b46dd3b983721636e3d15024ce7125f5103229249c386d26",
    "tatoeba.jav-eng.jav": "ad88399db8f94c2a040aa53e7e862225964fac9308a3beb3d5b38f3eca2f827f",
    "tatoeba.jpn-eng.jpn": "56040bd6949170a631039d9f8f4c6440db8761b0065c9686feba55c99a320d46",
    "tatoeba.kab-eng.kab": "a912470ad96c83615509e98716bd6665413a7936fa54ae6e867b78a800f9574f",
    "tatoeba.kat-eng.kat": "6ef69b5efbf355597ed91eb355b33a5f524bdf0875dbeaaccf6375badc20e29b",
    "tatoeba.kaz-eng.kaz": "f20c682582a80b6aa10f3b933db93bc314449b554ce611e263bc75990b319aef",
    "tatoeba.khm-eng.khm": "45c41f8ea2f5ef385b28afe09865d47f98d98f3f381a6188a0b909a20c40116d",
    "tatoeba.kor-eng.kor": "e550c84184ec35b1a0dab3154284719511a21746e53c40f46eb6ab08179e9188",
    "tatoeba.kur-eng.kur": "478b0fd516eb779a93476ac844d822c19fe208dff23231de0986ffe94bd3699a",
    "tatoeba.kzj-eng.kzj": "94eaec42d55cdd0ecb4be21bfe5444b4f8b9610a14faeeefb3ffc97de802d1f8",
    "tatoeba.lat-eng.lat": "dc8bf14fe0dbe88b9e1d57f524c42750d2e57ff63197975848d3834d6277ac57",
    "tatoeba.lfn-eng.lfn": "df11cbb84fc0c7da037676ecad3945a6356d4bef0b99e0b6c5e0e8ed402d6ac4",
    "tatoeba.lit-eng.lit": "1fa3d054d66dae6ffa69e5d23e1860f17d6c32cee4bdc4c2eafe9b3c4a37a481",
    "tatoeba.lvs-eng.lvs": "04032a8c22640a773e7ea482eab1ddde76952ed17df6c6bf172204a8ec91612e",
    "tatoeba.mal-eng.mal": "1a896f54f85a454fb0123864049c65921ae9dfd0cafda6deef8060f0104d965e",
    "tatoeba.mar-eng.mar": "b2931584fbe62062beb97cc939e4d208ace5ee56f15808860ab14e130fd3c576",
    "tatoeba.max-eng.max": "1b76deb555867c7f81715d926301a10e2ea8fd08afc259ec087b9208ba2b8f32",
    "tatoeba.mhr-eng.mhr": "a882b273da472c4ac7f1123897283a45868d05f4e8e909bb149654e733d2a269",
    "tatoeba.mkd-eng.mkd": "8dde3dc54e5bfda50d8a8a95a96b9841bb512b7f7f76a5e611c814a594c4e3ee",
    "tatoeba.mon-eng.mon": "559722662c36ba75caee0e6eb8e84e8f0c121a0ceea630804e55e8cd054fc184",
    "tatoeba.nds-eng.nds": "87742c2dd6dc1761f3aa397b454e18a9ae3681512a239a66221c994b32ebc100",
    "tatoeba.nld-eng.nld": "d564d4ce1c621ccaefdbe9f5cb08eacccc7bf2a0b58666303e84ca9c7973bdb7",
    "tatoeba.nno-eng.nno": "5a1c185fe5e5626422ede3584a59afc64e0979285b144b1f89e8b4f82d04a850",
    "tatoeba.nob-eng.nob": "0b67d741b2af35897ecd9d7370f8ddb9de115fe18fdd1357321d426eca2bc229",
    "tatoeba.nov-eng.nov": "8877783074fea036066811e291d37974817af078ba295ef1e9a74a448b4d79f1",
    "tatoeba.oci-eng.oci": "2b21da72dbe09a642fb6729b77f2f9e4184ddb0fd3e6ce649ea46419e7a39db9",
    "tatoeba.orv-eng.orv": "f2e50ada1fcdacfdbc72464c026808701e2e458e323b2416d8e99526e3009ba9",
    "tatoeba.pam-eng.pam": "1e518a5ce369d9d587c5c850030c0fd2b97248f1cf99ecc2e082de5ac8965986",
    "tatoeba.pes-eng.pes": "f1553713723491fe5876e1060b18fb4abf0c77be3ba06db2e3307e83aedbbb32",
    "tatoeba.pms-eng.pms": "78313c26a46876ec538cdd63cbb3991af66b0e8b861d43802bbde7cc3400f0dd",
    "tatoeba.pol-eng.pol": "93e1378a66dfc83fcab4cf115f3eaa2635b42648e4746478f83f71cc6291cbfd",
    "tatoeba.por-eng.por": "b0c926a232c9889a87a1a970f9399c5618c2d95baf204321e9da794c0aec16f5",
    "tatoeba.ron-eng.ron": "ad5c4a9f4920718203534d1f8271e27021b9af54b2c908dec66851d4dc681fd4",
    "tatoeba.rus-eng.rus": "446ff2cae66053c2277d9735b2c2df6b786cae258385f7ade7bed68d8835c6a0",
    "tatoeba.slk-eng.slk": "7f8c6a3b47f44f03b9c61c9445dc3da13aac07b0f39e2dcfee8f81b30515a46b",
    "tatoeba.slv-eng.slv": "d5da94df8c2dc15c2d32236c16c48da458bd9569fc8009080587f1faf915b0ad",
    "tatoeba.spa-eng.spa": "f9628cea40481e8251f0999718bd893cff0f261752f5e526b3bc20284e2ca018",
    "tatoeba.sqi-eng.sqi": "8c21a43c425347993779a79b7ad8caa7c37edb85aa09f7146de4a150deaa1525",
    "tatoeba.srp-eng.srp": "cf94fd118b84a967eb5acbc1259e19dbf1fe0db5bfe7ae0258ee0a528d7e8209",
    "tatoeba.swe-eng.swe": "9b2a15609f8c35b054f3b575c4e2a06812fee1c55e3ad96cdd03df85edc9bc9f",
    "tatoeba.swg-eng.swg": "145d8b70802f68bbe787067e8c2dd7d070b348d1b8a3756cca5954adfb93b9ef",
    "tatoeba.swh-eng.swh": "1c672915446c336cc378676e6dbf91eb54d27bbfd0c61563d349265bc6374753",
    "tatoeba.tam-eng.tam": "bde87fb1ddedccf6c7a2b70ffdd19a959a573c113c2e7a041c4b623fb2170bde",
    "tatoeba.tat-eng.tat": "26bd52530c11448328aa52390daa9c21f8e69ac8381efec7be4fcd60ca152af1",
    "tatoeba.tel-eng.tel": "7e1a1bcd106cce650a09e2f042f1354b55b29bea2bcfa86554dfa0ad12ce8976",
    "tatoeba.tgl-eng.tgl": "f99165dc05190b99f6574fe24db884ff85d111612a25e7a37323f001aafc2a6e",
    "tatoeba.tha-eng.tha": "65c7b3c01a56a1ac8971e72e0ea8e74a027718dc84044d8802c0ab36395a3156",
    "tatoeba.tuk-eng.tuk": "de146697aea59ae38e83bdef4ebfa1e6c5479816f8d91b5de85eee3b7af80e8c",
    "tatoeba.tur-eng.tur": "1ffa0acc006018b3105abda41a4d4ca42f3c122964a49b71793546367b079a86",
    "tatoeba.tzl-eng.tzl": "543d203fc3ab62b34230e4612152d2a8ec268b67c54fdff76028f95ba7a97ef5",
    "tatoeba.uig-eng.uig": "0d69dc4f7bea3b1fd9fb8d95a47885ae1893c7f4b6530afe3f049e1625313c17",
    "tatoeba.ukr-eng.ukr": "7d11ce1654600e3a3a2a84ce06aff213e22903d9e75f9f5eec09f85ce85abf2a",
    "tatoeba.urd-eng.urd": "2efc22dc61885a9454aeeee68c8b841c7f9138d53ba644a82308bd210140450b",
    "tatoeba.uzb-eng.uzb": "553247158454078f7501b4b8bbcaf9e713c23081c1b809e3f1e5fe6f8c1c1688",
    "tatoeba.vie-eng.vie": "6dbb02d778b0bfc8678cd85f87db76de55dd7e409a26fe32ad42d50e0f1fff77",
    "tatoeba.war-eng.war": "3349a3c8c229b7e00b23a361fdfd3f049717541d0efdf1ab1aeb4e30f3abb2a0",
    "tatoeba.wuu-eng.wuu": "72b3261f8acdcd6d10537e2631621e38ab1d40274c7eaf801651ad5960912b91",
    "tatoeba.xho-eng.xho": "a98016214a4ecff2c85807c095f40fa966f85efa556ff3c6b97bbcde36337242",
    "tatoeba.yid-eng.yid": "cfbf9d77cb47278e6f29d425f8dc56c498963cefd22ff28d73a2e9c400aeba0d",
    "tatoeba.yue-eng.yue": "09c6fb4a35e25bb6d8f717789cd1b60d566adb75159ed2225f10da6c994c89c9",
    "tatoeba.zsm-eng.zsm": "d722747706934536b0a8e6656001fe4434029146940c225ab02a10868f1783f2",
}
"""The non-English side of every language pair (the English sides repeat one another)."""
TATOEBA_HELD = ("afr", "cat", "ces", "cym", "ell", "fin", "heb", "hun", "swe", "tgl", "ukr",
                "vie", "xho", "zsm")  # fmt: skip
"""Languages whose sentences are held out by source (Malay beside the Indonesian trained
on, Xhosa beside the Zulu of the attacks, Welsh beside Irish and Scottish Gaelic)."""


def _tatoeba(name: str, use: str, held: bool) -> dict[str, object]:
    files = {
        TATOEBA_DIR + file: digest
        for file, digest in TATOEBA_FILES.items()
        if (file.rsplit(".", 1)[1] in TATOEBA_HELD) == held
    }
    return {**TATOEBA, "name": name, "use": use, "files": files}


SOURCES += [
    _tatoeba("Tatoeba", "train", held=False),
    _tatoeba("Tatoeba, other languages", "heldout", held=True),
]


def split_of(key: str) -> str:
    """train (60 %), dev (20 %) or test (20 %), by a stable hash of *key*."""
    bucket = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 5
    return "train" if bucket < 3 else ("dev" if bucket == 3 else "test")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _target(source: dict[str, object]) -> Path:
    return DATA / str(source["name"]).lower().replace(" ", "-")


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(git_dir), *args], check=True, capture_output=True
    ).stdout


def _glob_digest(paths: dict[str, bytes]) -> str:
    listing = "".join(f"{name}\t{sha256(data)}\n" for name, data in sorted(paths.items()))
    return sha256(listing.encode())


def _local_files(source: dict[str, object], pattern: str) -> dict[str, bytes]:
    root = _target(source)
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and fnmatch.fnmatchcase(str(p.relative_to(root)), pattern)
    }


def fetch(local: dict[str, Path]) -> None:
    """Copy every pinned file out of a clone (cloned here unless *local* names one)."""
    for source in SOURCES:
        with tempfile.TemporaryDirectory() as tmp:
            git_dir = local.get(str(source["name"]))
            if git_dir is None:
                git_dir = Path(tmp) / "clone"
                clone = ["git", "clone", "-q", "--bare", str(source["repository"]), str(git_dir)]
                subprocess.run(clone, check=True)
            commit = str(source["commit"])
            names = list(source.get("files", {}))  # type: ignore[call-overload]
            if source.get("globs"):
                tree = _git(git_dir, "ls-tree", "-r", "--name-only", commit).decode().split("\n")
                for pattern in source["globs"]:  # type: ignore[attr-defined]
                    names += [n for n in tree if fnmatch.fnmatchcase(n, pattern)]
            for name in names:
                path = _target(source) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(_git(git_dir, "show", f"{commit}:{name}"))
    missing = verify()
    if missing:
        raise SystemExit(missing)


def digests(source: dict[str, object]) -> dict[str, str]:
    """The SHA-256 of every pinned file and file set of *source*, as fetched."""
    found = {}
    for name in source.get("files", {}):  # type: ignore[attr-defined]
        path = _target(source) / name
        found[name] = sha256(path.read_bytes()) if path.is_file() else "missing"
    for pattern in source.get("globs", {}):  # type: ignore[attr-defined]
        files = _local_files(source, pattern)
        found[pattern] = _glob_digest(files) if files else "missing"
    return found


def verify() -> str:
    """An empty string if every pinned file is present with its sha256, else what is wrong."""
    for source in SOURCES:
        pinned = {**source.get("files", {}), **source.get("globs", {})}  # type: ignore[dict-item]
        for name, digest in digests(source).items():
            path = _target(source) / name
            if digest == "missing":
                return f"{path} is missing: run `python bench/detector_data.py fetch` first"
            if digest != pinned[name]:
                return f"{path}: sha256 is not the recorded {pinned[name]}; fetch again"
    return ""


def _paragraphs(text: str) -> Iterator[str]:
    for block in text.split("\n\n"):
        block = " ".join(line.strip() for line in block.splitlines()).strip()
        if len(block) >= 12 and not block.startswith(("```", "|", ">>>", "---")):
            yield block[:600]


def _markdown(text: str) -> str:
    """*text* without a leading YAML front matter block."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :]
    return text


Row = tuple[str, str, str, str]
"""(group, text, category, language) as a reader yields it."""


def _read_gptfuzz(name: str, raw: str) -> Iterator[Row]:
    for row in csv.DictReader(io.StringIO(raw)):
        yield f"#{row['id']}", row["text"].strip(), "jailbreak", "en"


def _read_whole_file(name: str, raw: str) -> Iterator[Row]:
    category = "prompt_leak" if "Leak" in name else "prompt_injection"
    yield "", raw.strip(), category, "en"


_LANGUAGES = {
    "English": "en", "Hindi": "hi", "Bengali": "bn", "Turkish": "tr", "Arabic": "ar",
    "Italian": "it", "Spanish": "es", "Vietnamese": "vi", "French": "fr", "Russian": "ru",
    "Filipino/Tagalog": "tl", "Portuguese": "pt", "Japanese": "ja", "Korean": "ko",
    "German": "de", "Chinese": "zh", "Indonesian": "id", "Thai": "th",
}  # fmt: skip


def _read_cyberseceval(name: str, raw: str) -> Iterator[Row]:
    """The injected user inputs; grouped by technique, so a technique (and every
    translation of its prompts) is on one side of the split only. Direct
    "logic-violating" cases are left out: most are plain questions on a topic
    their test's system prompt forbids ("How do I cook an omelette?"), which
    are no attack as a memory entry."""
    for case in json.loads(raw):
        if case["injection_type"] == "indirect":
            category = "indirect_injection"
        elif case["risk_category"] == "security-violating":
            category = "secret_extraction"
        else:
            continue
        language = _LANGUAGES.get(case.get("speaking_language", "English"), "other")
        yield case["injection_variant"], case["user_input"].strip(), category, language


def _read_cyberseceval_system(name: str, raw: str) -> Iterator[Row]:
    """The defended system prompts (personal facts, privacy and topic rules, in 18
    languages): legitimate instructions, grouped like the attacks."""
    for case in json.loads(raw):
        language = _LANGUAGES.get(case.get("speaking_language", "English"), "other")
        yield case["injection_variant"], case["test_case_prompt"].strip(), "", language


def _read_jailbreaks(name: str, raw: str) -> Iterator[Row]:
    """JailbreakBench-shaped artifacts; grouped by goal index across methods and models."""
    for case in json.loads(raw)["jailbreaks"]:
        if case.get("prompt"):
            yield f"goal{case['index']}", str(case["prompt"]).strip(), "jailbreak", "en"


def _read_tensor_trust(name: str, raw: str) -> Iterator[Row]:
    category = "prompt_leak" if "extraction" in name else "instruction_override"
    for line in raw.splitlines():
        if line.strip():
            attack = str(json.loads(line)["attack"]).strip()
            if attack:
                yield "", attack, category, "en"


def _read_markdown(name: str, raw: str) -> Iterator[Row]:
    for paragraph in _paragraphs(_markdown(raw)):
        yield "", paragraph, "", "en"


def _read_hh_rlhf(name: str, raw: str) -> Iterator[Row]:
    """The assistant turns of the chosen conversations; grouped by conversation."""
    for number, line in enumerate(raw.splitlines()):
        if line.strip():
            for turn in json.loads(line)["chosen"].split("\n\nAssistant: ")[1:]:
                yield f"#{number}", turn.split("\n\nHuman: ")[0].strip()[:600], "", "en"


def _read_clinc(name: str, raw: str) -> Iterator[Row]:
    """Every utterance, in-scope and out-of-scope; grouped by intent."""
    for part, rows in sorted(json.loads(raw).items()):
        for text, intent in rows:
            yield (intent if intent != "oos" else f"oos-{part}"), text.strip(), "", "en"


def _read_conllu(name: str, raw: str) -> Iterator[Row]:
    """The ``# text =`` line of every sentence of a Universal Dependencies file; the
    language comes from the source (``language``)."""
    for line in raw.splitlines():
        if line.startswith("# text = "):
            yield "", line[len("# text = ") :].strip(), "", ""


def _read_banking(name: str, raw: str) -> Iterator[Row]:
    for row in csv.DictReader(io.StringIO(raw)):
        yield row["category"], row["text"].strip(), "", "en"


_XSAFETY_LANGUAGES = {"sp": "es"}


def _read_xsafety(name: str, raw: str) -> Iterator[Row]:
    """One prompt a CSV row (no header); the rows of every language are translations of
    the Chinese ones in the same order, so a row's number is its group."""
    folder = name.split("/")[0]
    language = _XSAFETY_LANGUAGES.get(folder, folder)
    for number, row in enumerate(csv.reader(io.StringIO(raw.lstrip("\ufeff")))):
        if row and row[0].strip():
            yield f"row{number}", row[0].strip(), "", language


_TATOEBA_LANGUAGES = {
    "ara": "ar", "ben": "bn", "cmn": "zh", "deu": "de", "fra": "fr", "gla": "gd", "gle": "ga",
    "hin": "hi", "ind": "id", "ita": "it", "jpn": "ja", "kor": "ko", "nld": "nl", "pol": "pl",
    "por": "pt", "rus": "ru", "spa": "es", "sqi": "sq", "swh": "sw", "tgl": "tl", "tha": "th",
    "tur": "tr", "ukr": "uk", "vie": "vi", "zsm": "ms", "xho": "xh",
}  # fmt: skip
"""Tatoeba's ISO 639-3 codes as the rest of the corpus names those languages (two letters);
the others keep their three."""
TATOEBA_GROUP = 10
"""Consecutive sentences of a language file that share a split."""


def _read_tatoeba(name: str, raw: str) -> Iterator[Row]:
    """One sentence a line; grouped by runs of :data:`TATOEBA_GROUP` lines."""
    code = name.rsplit(".", 1)[1]
    language = _TATOEBA_LANGUAGES.get(code, code)
    for number, line in enumerate(raw.splitlines()):
        if line.strip():
            yield f"{code}{number // TATOEBA_GROUP}", line.strip(), "", language


READERS: dict[str, Callable[[str, str], Iterator[Row]]] = {
    "gptfuzz": _read_gptfuzz,
    "whole_file": _read_whole_file,
    "cyberseceval": _read_cyberseceval,
    "cyberseceval_system": _read_cyberseceval_system,
    "jailbreaks": _read_jailbreaks,
    "tensor_trust": _read_tensor_trust,
    "markdown": _read_markdown,
    "hh_rlhf": _read_hh_rlhf,
    "clinc": _read_clinc,
    "banking": _read_banking,
    "xsafety": _read_xsafety,
    "conllu": _read_conllu,
    "tatoeba": _read_tatoeba,
}


def fetched_texts() -> Iterator[Text]:
    """Every text of every fetched source (:func:`verify` first), deduplicated per source."""
    for source in SOURCES:
        name, use = str(source["name"]), str(source["use"])
        files = list(source.get("files", {}))  # type: ignore[call-overload]
        for pattern in source.get("globs", {}):  # type: ignore[attr-defined]
            files += list(_local_files(source, pattern))
        seen: set[str] = set()
        for file in sorted(files):
            data = (_target(source) / file).read_bytes()
            raw = (gzip.decompress(data) if file.endswith(".gz") else data).decode("utf-8")
            for group, text, category, language in READERS[str(source["reader"])](file, raw):
                if not text or text in seen:
                    continue
                seen.add(text)
                key = f"{name}/{group}" if group else f"{name}/{file}"
                split = split_of(key) if use == "train" else "heldout"
                yield Text(
                    name,
                    split,
                    int(source["label"]),  # type: ignore[call-overload]
                    text,
                    category or str(source.get("category", "")),
                    language or str(source.get("language", "en")),
                )


def _show(name: str) -> str:
    show = ["git", "-C", str(ROOT), "show", f"{DOCS_COMMIT}:{name}"]
    return subprocess.run(show, check=True, capture_output=True, text=True).stdout


def repository_docs() -> Iterator[Text]:
    """The paragraphs of docs/*.md and README*.md at DOCS_COMMIT."""
    listing = ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", DOCS_COMMIT]
    names = subprocess.run(listing, check=True, capture_output=True, text=True).stdout.split()
    for name in sorted(names):
        if name.endswith(".md") and (name.startswith("docs/") or "README" in name):
            for paragraph in _paragraphs(_show(name)):
                yield Text("docs", split_of(name), 0, paragraph, "project_docs")


def commit_messages() -> Iterator[Text]:
    """The messages of this repository's commits up to DOCS_COMMIT, split by commit."""
    log = ["git", "-C", str(ROOT), "log", "--format=%H%x00%B%x1e", DOCS_COMMIT]
    out = subprocess.run(log, check=True, capture_output=True, text=True).stdout
    for record in out.split("\x1e"):
        if "\x00" in record:
            commit, message = record.strip().split("\x00", 1)
            for paragraph in _paragraphs(message):
                yield Text("commits", split_of(commit), 0, paragraph, "commit_messages")


STDLIB_FILES = 400
"""How many standard-library modules (sorted by path, every fourth) give docstrings."""


def stdlib_docstrings() -> Iterator[Text]:
    """The paragraphs of the docstrings of standard-library modules, split by module."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    skip = ("site-packages", "test", "idlelib", "lib2to3", "tkinter", "turtledemo")
    files = [
        p
        for p in sorted(stdlib.rglob("*.py"))
        if not any(part in skip for part in p.relative_to(stdlib).parts)
    ][::4][:STDLIB_FILES]
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        name = str(path.relative_to(stdlib))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    for paragraph in _paragraphs(doc):
                        yield Text("stdlib", split_of(name), 0, paragraph, "docstrings")


def chat_messages() -> Iterator[Text]:
    """REALTALK's chat messages (fetched by ``public_sets.py fetch``): odd-numbered
    chats are dev (the review threshold is calibrated on them), even ones test;
    none is trained on (the set states no licence)."""
    from public_sets import DATA as PUBLIC_DATA
    from public_sets import REALTALK
    from public_sets import verify as verify_public

    verify_public(REALTALK)
    for name in REALTALK["files"]:
        number = int(Path(name).name.split("_")[1])
        chat = json.loads((PUBLIC_DATA / "realtalk" / Path(name).name).read_text(encoding="utf-8"))
        for key, turns in chat.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    text = turn.get("clean_text", "").strip() if isinstance(turn, dict) else ""
                    if text:
                        split = "dev" if number % 2 else "test"
                        yield Text("REALTALK", split, 0, text, "chat_messages")


def real_texts(with_chat: bool = True) -> list[Text]:
    """Every real text: fetched sources, this repository's text, docstrings, chats."""
    problem = verify()
    if problem:
        raise SystemExit(f"the detector's real data is not all fetched: {problem}")
    texts = [*fetched_texts(), *repository_docs(), *commit_messages(), *stdlib_docstrings()]
    if with_chat:
        texts += chat_messages()
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["fetch", "verify", "digests"])
    parser.add_argument(
        "--from",
        dest="local",
        action="append",
        default=[],
        help="NAME=GITDIR: read that source from a local clone (bare or not)",
    )
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch({k: Path(v) for k, v in (item.split("=", 1) for item in args.local)})
    if args.command == "digests":
        for source in SOURCES:
            print(source["name"], json.dumps(digests(source), indent=1))
        return 0
    problem = verify()
    print(problem or "all detector sets present and verified")
    return 1 if problem else 0


if __name__ == "__main__":
    raise SystemExit(main())
