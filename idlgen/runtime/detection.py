"""``DetectionPostProcess`` (SSD post-processing), following TFLite's
``kernels/detection_postprocess.cc`` (the same attribute set):

inputs box encodings [1, A, 4] (ty, tx, th, tw), class scores [1, A, C(+background)], anchors
[A, 4] (yc, xc, h, w); ``scale`` = [y, x, h, w]. Boxes decode to [ymin, xmin, ymax, xmax].
Fast NMS (``useRegularNms`` false): one NMS over each anchor's best class score, then up to
``maxClassesPerDetection`` classes per kept box. Regular NMS: NMS per class
(``detectionsPerClass`` each), merged by score, the best ``maxDetections`` kept.
Outputs: boxes [1, N, 4], classes [1, N], scores [1, N], num_detections [1] (float32, N =
maxDetections * maxClassesPerDetection for fast NMS, maxDetections for regular NMS).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import KernelError

__all__ = ["detection_post_process", "decode_boxes", "nms"]


def decode_boxes(enc: np.ndarray, anchors: np.ndarray, scale: Sequence[float]) -> np.ndarray:
    ys, xs, hs, ws = (float(s) for s in scale)
    yc = enc[:, 0] / ys * anchors[:, 2] + anchors[:, 0]
    xc = enc[:, 1] / xs * anchors[:, 3] + anchors[:, 1]
    hh = 0.5 * np.exp(enc[:, 2] / hs) * anchors[:, 2]
    hw = 0.5 * np.exp(enc[:, 3] / ws) * anchors[:, 3]
    return np.stack([yc - hh, xc - hw, yc + hh, xc + hw], axis=1)


def _iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    def area(b: np.ndarray) -> np.ndarray:
        return np.asarray((b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1]))

    ymin = np.maximum(box[0], boxes[:, 0])
    xmin = np.maximum(box[1], boxes[:, 1])
    ymax = np.minimum(box[2], boxes[:, 2])
    xmax = np.minimum(box[3], boxes[:, 3])
    inter = np.maximum(ymax - ymin, 0) * np.maximum(xmax - xmin, 0)
    a, b = area(box), area(boxes)
    union = a + b - inter
    ok = (a > 0) & (b > 0) & (union > 0)
    return np.where(ok, inter / np.where(union > 0, union, 1), 0.0)


def nms(
    boxes: np.ndarray,
    scores: np.ndarray,
    iou_threshold: float,
    score_threshold: float,
    max_out: int,
) -> np.ndarray:
    """Greedy NMS: candidates with score >= threshold, by descending score (stable), a candidate
    is dropped when its IoU with a kept box exceeds the IoU threshold. Returns kept indices.
    """
    cand = np.flatnonzero(scores >= score_threshold)
    cand = cand[np.argsort(-scores[cand], kind="stable")]
    kept: list[int] = []
    alive = np.ones(cand.size, dtype=bool)
    for pos in range(cand.size):
        if len(kept) >= max_out:
            break
        if not alive[pos]:
            continue
        i = int(cand[pos])
        kept.append(i)
        rest = pos + 1
        if rest < cand.size:
            alive[rest:] &= _iou(boxes[i], boxes[cand[rest:]]) <= iou_threshold
    return np.asarray(kept, dtype=np.int64)


def detection_post_process(
    inputs: Sequence[np.ndarray],
    *,
    scale: Sequence[float] = (10.0, 10.0, 5.0, 5.0),
    nms_iou_threshold: float = 0.5,
    nms_score_threshold: float = 0.0,
    max_detections: int = 10,
    detections_per_class: int = 100,
    max_classes_per_detection: int = 1,
    num_classes: int = 1,
    use_regular_nms: bool = False,
) -> list[np.ndarray]:
    op = "DetectionPostProcess"
    if len(inputs) < 3:
        raise KernelError(op, "needs box encodings, class scores, anchors")
    enc = np.asarray(inputs[0], dtype=np.float64).reshape(-1, 4)
    cls = np.asarray(inputs[1], dtype=np.float64)
    anchors = np.asarray(inputs[2], dtype=np.float64).reshape(-1, 4)
    a = enc.shape[0]
    if anchors.shape[0] != a or cls.size % a:
        raise KernelError(op, f"{a} boxes, {anchors.shape[0]} anchors, scores {cls.shape} disagree")
    cls = cls.reshape(a, -1)
    nc = int(num_classes)
    offset = cls.shape[1] - nc  # leading background column(s)
    if nc <= 0 or offset < 0:
        raise KernelError(op, f"numClasses {nc} does not fit scores with {cls.shape[1]} columns")
    if len(scale) != 4 or min(float(s) for s in scale) == 0:
        raise KernelError(op, f"scale must be four non-zero floats, got {list(scale)}")
    if max_detections <= 0 or max_classes_per_detection <= 0:
        raise KernelError(op, "maxDetections and maxClassesPerDetection must be > 0")
    boxes = decode_boxes(enc, anchors, scale)
    scores = cls[:, offset:]
    if use_regular_nms:
        n_out = int(max_detections)
        picks: list[tuple[float, int, int]] = []  # (score, box, class)
        for c in range(nc):
            kept = nms(
                boxes,
                scores[:, c],
                nms_iou_threshold,
                nms_score_threshold,
                int(detections_per_class),
            )
            picks.extend((float(scores[i, c]), int(i), c) for i in kept)
        picks.sort(key=lambda p: -p[0])  # stable: earlier classes win ties
        picks = picks[:n_out]
        rows = [(b, c, s) for s, b, c in picks]
    else:
        k = min(int(max_classes_per_detection), nc)
        n_out = int(max_detections) * int(max_classes_per_detection)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        best = np.take_along_axis(scores, order[:, :1], axis=1)[:, 0]
        kept = nms(boxes, best, nms_iou_threshold, nms_score_threshold, int(max_detections))
        rows = [
            (int(i), int(order[i, j]), float(scores[i, order[i, j]]))
            for i in kept
            for j in range(k)
        ]
    out_boxes = np.zeros((1, n_out, 4), dtype=np.float32)
    out_cls = np.zeros((1, n_out), dtype=np.float32)
    out_scores = np.zeros((1, n_out), dtype=np.float32)
    for r, (b, c, s) in enumerate(rows):
        out_boxes[0, r] = boxes[b]
        out_cls[0, r] = c
        out_scores[0, r] = s
    return [out_boxes, out_cls, out_scores, np.array([len(rows)], dtype=np.float32)]
