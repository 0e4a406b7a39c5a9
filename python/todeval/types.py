"""
Types of what `todeval serve` takes and answers (docs/serve.md), as TypedDicts: the results are the
server's JSON as it is, so they compare equal to what `todeval rerank -o` and `todeval score
--turns` write, and `json.dumps` them back unchanged. Keys keep the server's spelling.
"""

from typing import Any, Dict, List, Literal, Optional, TypedDict

Label = Literal["entailment", "neutral", "contradiction"]
FourWayLabel = Literal["ok", "omission", "hallucination", "both"]


class NliPair(TypedDict):
    """A premise and a hypothesis, as /v1/nli takes them."""

    premise: str
    hypothesis: str


class NliResult(TypedDict):
    """One pair's probabilities and its argmax label, as /v1/nli answers."""

    entailment: float
    neutral: float
    contradiction: float
    label: Label


class Action(TypedDict, total=False):
    """A dialogue action: act, slot, values, and the service when it is not the item's."""

    act: str
    slot: str
    values: List[str]
    service: str


class RerankCandidate(TypedDict, total=False):
    """One system's candidate utterance, with its likelihood (higher is better)."""

    system: str
    text: str
    likelihood: float


class RerankItem(TypedDict, total=False):
    """A line of `todeval rerank -i`: inline `actions` (with `service`, `context`) or a `dataset_id`."""

    id: str
    dataset_id: str
    service: str
    context: str
    actions: List[Action]
    candidates: List[RerankCandidate]


class CandidateFidelity(TypedDict, total=False):
    """A candidate as the answer reports it: how many actions it realises, which, and its label."""

    system: str
    text: str
    likelihood: float
    fidelity: int
    realised: List[bool]
    hallucinated: Optional[bool]
    label: Optional[FourWayLabel]


class RerankResult(TypedDict):
    """An item's answer: the chosen candidate, the number of actions, every candidate scored."""

    id: str
    chosen: CandidateFidelity
    actions: int
    candidates: List[CandidateFidelity]


class ScoreItem(TypedDict, total=False):
    """The utterance to judge, with a `dataset_id` or inline `actions` (and `ground_truth`)."""

    id: str
    utterance: str
    dataset_id: str
    service: str
    context: str
    actions: List[Action]
    ground_truth: str


class ActionScore(TypedDict, total=False):
    """One action of a scored turn: its reference, entailment scores and status."""

    actionId: str
    service: str
    act: str
    slot: str
    reference: str
    entailed: bool
    entailment: float
    plainEntailment: float
    contextEntailment: float
    contextUsed: bool
    referenceViaContext: bool
    status: str


class TurnScore(TypedDict, total=False):
    """A line of `todeval score --turns`, with `id` the item's id."""

    id: str
    services: List[str]
    validation: Literal["validated", "excluded", "unchecked"]
    exclusionReasons: List[Any]
    faithful: Optional[bool]
    utterance: str
    previousUserUtterance: str
    actions: List[ActionScore]
    hallucination: Dict[str, Any]
    label: Optional[FourWayLabel]
    # With `todeval serve --granularity sentence`: {check, sentences: [{text, start, end, verdict,
    # courtesy?, fact?, probs?, contradictedBy?, contradictionProbs?, contextUsed?, contextOnly?}],
    # unsupported: [text, ...]} (docs/sgsacc.md, "Sentence granularity").
    sentences: Dict[str, Any]


class Limits(TypedDict):
    """The server's limits (`todeval serve --max-*` flags); the client splits batches to them."""

    maxBodyBytes: int
    maxItems: int
    maxCandidates: int
    maxActions: int
    maxPairs: int
    maxPendingPairs: int
    timeoutMs: int


class Health(TypedDict, total=False):
    """GET /healthz: the model, device, dataset, pending pairs and the limits."""

    status: str
    model: str
    revision: Optional[str]
    dtype: str
    device: str
    maxLength: int
    dataset: str
    pendingPairs: int
    limits: Limits


#: `todeval serve`'s defaults, assumed for a server whose /healthz does not report its limits.
DEFAULT_LIMITS: Limits = {
    "maxBodyBytes": 1 << 20,
    "maxItems": 64,
    "maxCandidates": 16,
    "maxActions": 32,
    "maxPairs": 512,
    "maxPendingPairs": 8192,
    "timeoutMs": 60000,
}
