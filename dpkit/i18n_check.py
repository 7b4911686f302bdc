"""The exercise checkers' messages in other languages than English: their catalogue.

Every text a checker of :mod:`dpkit.check` shows (a verdict's message and details, the
"NOT YET"/"PASSED" headings, the sentences around an error the student's function raised)
is an English template with named fields, passed through :func:`dpkit.i18n.tr` and then
formatted (``tr("your sensitivity {value!r} is {direction}; {hint}").format(...)``).
:func:`~dpkit.i18n.tr` looks a text up in :data:`dpkit.i18n.CATALOGUE` (the figures' and
widgets' labels) and then here: one function and one lookup path for every message of the
package, and two dictionaries that share no key, so that the figures' catalogue and this one
are edited apart.

This module is data only and sits beside :mod:`dpkit.i18n`, below the checkers: a catalogue
inside :mod:`dpkit.check` would make :mod:`dpkit.i18n` (which the figures use) import the
checkers' package, an upward import. Each translation keeps its template's fields, with the
same format specifications, so that a verdict carries the same numbers in every language;
it says no more than the English text does (the checkers never state an expected answer).
Terms follow the glossary of the Chinese edition (``book/zh/glossary.md``).
"""

from __future__ import annotations

__all__ = ["CHECK_CATALOGUE"]

#: The translations of the checkers' messages, keyed by the English template (one
#: dictionary per language but English).
CHECK_CATALOGUE: dict[str, dict[str, str]] = {"zh": {
    # Verdict headings (dpkit/check/_verdict.py).
    "PASSED: {message}": "通过：{message}",
    "NOT YET: {message}": "尚未通过：{message}",
    "Passed:": "通过：",
    "Not yet:": "尚未通过：",
    # Calling the student's function and reading its result (dpkit/check/_common.py).
    " (in {place})": "（位于 {place}）",
    "{error}{place} ({why})": "{error}{place}（{why}）",
    " (an array of shape {shape})": "（形状为 {shape} 的数组）",
    " (of type {type})": "（类型为 {type}）",
    "a whole number": "整数",
    "a finite number": "有限数",
    "{value}{kind}, not {noun}": "{value}{kind}，不是{noun}",
    "{value}{kind}, not {noun}: one number is expected (a scalar, or an array of size 1)":
        "{value}{kind}，不是{noun}：需要一个数（标量，或大小为 1 的数组）",
    "{value}{kind}, not {noun} (beyond the float range)":
        "{value}{kind}，不是{noun}（超出浮点数的范围）",
    "{length} whole numbers": "一组 {length} 个整数",
    "{length} finite numbers": "一组 {length} 个有限数",
    "{value}{kind}, not {noun}: the shape must be ({length},)":
        "{value}{kind}，不是{noun}：形状必须是 ({length},)",
    "{value} (a {container} of {count} item), not {noun}":
        "{value}（含 {count} 项的 {container}），不是{noun}",
    "{value} (a {container} of {count} items), not {noun}":
        "{value}（含 {count} 项的 {container}），不是{noun}",
    "{value}{kind}, not {noun} (a tuple, a list or an array of shape ({length},))":
        "{value}{kind}，不是{noun}（应为元组、列表或形状为 ({length},) 的数组）",
    "{value}: its item {index} is {why}": "{value}：其第 {index} 项是 {why}",
    "{start}… ({length} characters)": "{start}…（共 {length} 个字符）",
    "{where}, your function raised {error}; {hint}": "{where}，你的函数抛出了 {error}；{hint}",
    "{where}, your function raised {error}": "{where}，你的函数抛出了 {error}",
    "{where}, your function returned a Verdict, not an answer":
        "{where}，你的函数返回了一个 Verdict，而不是答案",
    "{where}, your function returned {why}": "{where}，你的函数返回了 {why}",
    "the answer must lie in {interval}": "答案必须位于 {interval} 内",
    "{where}, your function returned {value!r}: {why}": "{where}，你的函数返回了 {value!r}：{why}",
    "for {point}": "当 {point} 时",
    "{point}: got {value!r}, right": "{point}：得到 {value!r}，正确",
    "{point}: got {value!r}, wrong": "{point}：得到 {value!r}，错误",
    "{where} {wrong}": "{where}，{wrong}",
    "{point}: {value!r} is right": "{point}：{value!r} 正确",
    # Introduction: randomized response (dpkit/check/intro.py).
    "at epsilon={epsilon:g}": "当 epsilon={epsilon:g} 时",
    ("at epsilon={epsilon:g} your probability {p:.4g} is below 1/2: respondents would lie "
     "more often than tell the truth; the exercise asks for the probability above 1/2"):
        ("当 epsilon={epsilon:g} 时，你的概率 {p:.4g} 低于 1/2：回答者说谎会比说真话更常见；练习"
         "要求的是大于 1/2 的那个概率"),
    "more than e^ε: not ε-DP": "大于 e^ε：不满足 ε-差分隐私",
    "less than e^ε: private, but noisier than needed":
        "小于 e^ε：满足 ε-差分隐私，但噪声比所需的大",
    ("at epsilon={epsilon:g} the two answers' report probabilities differ by a factor "
     "{ratio:.6g} = e^ε × (1 {sign} {excess:.2g}), {effect}"):
        ("当 epsilon={epsilon:g} 时，两种回答的报告概率相差 {ratio:.6g} = e^ε × (1 {sign} {exces"
         "s:.2g}) 倍，{effect}"),
    "your probability gives exactly a ratio of e^ε between the two answers":
        "你的概率使两种回答之间的比值恰好为 e^ε",
    "for yes_fraction={y:g}, epsilon={epsilon:g}": "当 yes_fraction={y:g}, epsilon={epsilon:g} 时",
    "an unbiased estimate must be allowed to leave [0, 1]": "无偏估计必须能够取 [0, 1] 之外的值",
    ("if {value:.4g} were the true share, the expected share of \"yes\" reports would be "
     "{implied:.4g}, not {y:g}"):
        "如果 {value:.4g} 是真实比例，“是”报告的期望比例将是 {implied:.4g}，而不是 {y:g}",
    "for yes_fraction={y:g}, epsilon={epsilon:g} your estimate is {value:.6g}; {hint}":
        "当 yes_fraction={y:g}, epsilon={epsilon:g} 时，你的估计是 {value:.6g}；{hint}",
    "epsilon={epsilon:g}: unbiased at yes_fraction = {fractions}":
        "epsilon={epsilon:g}：在 yes_fraction = {fractions} 处无偏",
    ("your estimator is unbiased: it inverts E[reported] = π·p + (1 − π)(1 − p) (p = {p:.4f} "
     "at ε = 1)"):
        ("你的估计量是无偏的：它反解了 E[reported] = π·p + (1 − π)(1 − p)（ε = 1 时 p = {p:.4f}"
         "）"),
    "at p={p:g}": "当 p={p:g} 时",
    "ε is never negative (which report is more likely when p < 1/2?)":
        "ε 永远不会是负数（当 p < 1/2 时，哪种报告更可能出现？）",
    ("at p={p:g} your ε is too small: some report is more than e^ε times likelier under one "
     "answer"):
        "当 p={p:g} 时，你的 ε 太小：某种报告在一种回答下出现的可能性超过另一种回答下的 e^ε 倍",
    "at p={p:g} your ε is larger than needed: a smaller ε already holds":
        "当 p={p:g} 时，你的 ε 比所需的大：更小的 ε 也成立",
    "your ε is the smallest that holds, including when p < 1/2":
        "你的 ε 是成立的最小值，包括 p < 1/2 的情形",
    "at {point}": "当 {point} 时",
    ("at {point} the most and least likely reports of a person differ by a factor {ratio:.4g} "
     "between two true answers, {effect}"):
        ("当 {point} 时，一个人最可能和最不可能的报告在两个真实回答之间相差 {ratio:.4g} 倍，{eff"
         "ect}"),
    "k={k}: exact at epsilon = {epsilons}": "k={k}：在 epsilon = {epsilons} 处精确",
    ("your probability makes every report exactly e^ε more likely under the true answer than "
     "under any other"):
        "你的概率使每个报告在真实回答下的可能性恰好是在任何其他回答下的 e^ε 倍",
    # What the promise means (dpkit/check/promise.py).
    "an accuracy bound lies between 1/2 (a coin flip) and 1":
        "准确度的界位于 1/2（抛硬币）和 1 之间",
    "the δ term matters: ": "δ 项不可忽略：",
    ("at {point} your bound is too low: {hint}some (ε, δ)-DP mechanism lets a guess be right "
     "more often than that"):
        ("当 {point} 时，你的界太低：{hint}存在某个 (ε, δ)-差分隐私机制，能让猜测正确的概率比这"
         "更高"),
    ("at {point} your bound is higher than any (ε, δ)-DP mechanism allows: {hint}combine both "
     "inequalities of the hypothesis-testing theorem"):
        ("当 {point} 时，你的界高于任何 (ε, δ)-差分隐私机制所允许的：{hint}把假设检验定理的两个"
         "不等式结合起来"),
    "delta={delta:g}: exact at epsilon = {epsilons}":
        "delta={delta:g}：在 epsilon = {epsilons} 处精确",
    ("your bound is exact for every ε and δ tried (and randomized response attains it when δ "
     "= 0)"):
        "你的界对所试的每个 ε 和 δ 都是精确的（且 δ = 0 时随机响应能达到它）",
    "that is not a probability": "这不是一个概率",
    ("at {point} your β is below what DP allows: a test with these error rates would violate "
     "one of the two inequalities (did you use both, and the complement events?)"):
        ("当 {point} 时，你的 β 低于差分隐私所允许的：具有这些错误率的检验会违反两个不等式之一（"
         "你是否两个都用了，也用了补事件？）"),
    ("at {point} your β is larger than necessary: some (ε, δ)-DP mechanism has a test with "
     "false-positive rate α and fewer false negatives"):
        ("当 {point} 时，你的 β 比必要的大：存在某个 (ε, δ)-差分隐私机制，它有一个假阳性率为 α "
         "且假阴性更少的检验"),
    "delta={delta:g}: exact at epsilon = {epsilons}, each with alpha = {alphas}":
        "delta={delta:g}：在 epsilon = {epsilons} 处精确，每处 alpha = {alphas}",
    "your trade-off bound is exact on every α, ε and δ tried":
        "你的权衡界在所试的每个 α、ε 和 δ 上都是精确的",
    "at {point} you return δ = {value:.6g}, but no δ is needed when ε′ is at least ε":
        "当 {point} 时，你返回 δ = {value:.6g}，但当 ε′ 不小于 ε 时不需要任何 δ",
    ("at {point} your δ is too small: some set of reports still breaks the (ε′, δ) inequality "
     "(try the report that equals the true answer)"):
        ("当 {point} 时，你的 δ 太小：仍有某个报告集合违反 (ε′, δ) 不等式（试试与真实回答相同的"
         "那个报告）"),
    ("at {point} your δ is larger than needed: the inequality holds for every set of reports "
     "with a smaller δ"):
        "当 {point} 时，你的 δ 比所需的大：取更小的 δ，不等式对每个报告集合也成立",
    "epsilon={epsilon:g}: exact at epsilon_prime = {primes}":
        "epsilon={epsilon:g}：在 epsilon_prime = {primes} 处精确",
    "your δ is the smallest that works, for every ε and ε′ tried":
        "你的 δ 是可行的最小值，对所试的每个 ε 和 ε′ 都是如此",
    # The Laplace mechanism (dpkit/check/laplace.py).
    "too large": "太大",
    "too small": "太小",
    ("upper − lower is the change when one person's value is *replaced*; our neighbours add "
     "or remove a person: how far can that alone move the sum?"):
        ("upper − lower 是一个人的值被*替换*时的变化；我们的邻近关系是增删一个人：仅此一项能使这"
         "个和改变多少？"),
    ("the count changes too when a person is added or removed: the pair's ℓ1 sensitivity "
     "covers both numbers"):
        "增删一个人时计数也会变：这两个数合在一起的 ℓ1 敏感度要把两者都算上",
    ("a clipped value can be negative, and removing a person with a negative value changes "
     "the sum too: consider every value in [lower, upper]"):
        "裁剪后的值可能是负数，删除一个值为负的人也会改变和：要考虑 [lower, upper] 中的每个值",
    ("write down the largest change one added or removed person can make to the sum and to "
     "the count, then take the ℓ1 norm"):
        "写出增删一个人对和与计数所能造成的最大变化，再取 ℓ1 范数",
    "your sensitivity {value!r} is {direction}; {hint}": "你的敏感度 {value!r} {direction}；{hint}",
    "for values clipped to {point}": "对裁剪到 {point} 的值",
    "right: one Laplace mechanism with this Δ releases both numbers":
        "正确：用这个 Δ 的一个拉普拉斯机制即可同时发布这两个数",
    "1 − confidence is the probability of *missing* the true answer, not of covering it":
        "1 − confidence 是*漏掉*真实答案的概率，而不是覆盖它的概率",
    "P[|Lap(b)| > t] = exp(−t/b) already counts both tails: no factor 2 inside the logarithm":
        "P[|Lap(b)| > t] = exp(−t/b) 已经计入了两侧尾部：对数里不需要因子 2",
    "that is the width of the whole interval: the question asks for half":
        "这是整个区间的宽度：题目要的是一半",
    "solve P[|Lap(b)| > w] = 1 − confidence for w": "对 w 求解 P[|Lap(b)| > w] = 1 − confidence",
    "your half-width is {direction}; {hint}": "你的半宽{direction}；{hint}",
    "your interval has exactly the requested coverage": "你的区间的覆盖率恰好是所要求的",
    ("your releases are rounded: only {distinct} different values among {draws} releases, all "
     "multiples of {step:g}. Return the release unrounded, as a float: rounded releases are "
     "no longer distributed as value + Lap(Δ/ε)"):
        ("你的发布值被舍入了：{draws} 个发布值中只有 {distinct} 个不同的值，且都是 {step:g} 的倍"
         "数。请返回不经舍入的发布值（浮点数）：舍入后的发布值不再服从 value + Lap(Δ/ε) 的分布"),
    ("your releases are rounded: only {distinct} different values among {draws} releases. "
     "Return the release unrounded, as a float: rounded releases are no longer distributed as "
     "value + Lap(Δ/ε)"):
        ("你的发布值被舍入了：{draws} 个发布值中只有 {distinct} 个不同的值。请返回不经舍入的发布"
         "值（浮点数）：舍入后的发布值不再服从 value + Lap(Δ/ε) 的分布"),
    "the complement of event {event!r}": "事件 {event!r} 的补事件",
    "event {event!r}": "事件 {event!r}",
    "ε >= {epsilon:.3f} with confidence {confidence:.10g} ({name}: {k0}/{n} vs {k1}/{n})":
        "ε >= {epsilon:.3f}，置信水平 {confidence:.10g}（{name}：{k0}/{n} 对 {k1}/{n}）",
    "for value={value:g}, Δ={sensitivity:g}, ε={epsilon:g}":
        "当 value={value:g}, Δ={sensitivity:g}, ε={epsilon:g} 时",
    ("value={value:g}, Δ={sensitivity:g}, ε={epsilon:g}: mean |release − value| = "
     "{spread:.4g} (expected b = {scale:g}), KS p-value {pvalue:.3g}"):
        ("value={value:g}, Δ={sensitivity:g}, ε={epsilon:g}：|发布值 − value| 的均值 = {spread:."
         "4g}（期望 b = {scale:g}），KS 检验 p 值 {pvalue:.3g}"),
    ("the releases are centred near {centre:.3g}, not at value: the release is value plus "
     "noise centred at 0"):
        "发布值集中在 {centre:.3g} 附近，而不是 value 处：发布值是 value 加上以 0 为中心的噪声",
    ("almost all releases lie above value: the noise must be symmetric around 0, negative as "
     "often as positive"):
        "几乎所有发布值都在 value 之上：噪声必须关于 0 对称，取负值与取正值一样常见",
    ("almost all releases lie below value: the noise must be symmetric around 0, negative as "
     "often as positive"):
        "几乎所有发布值都在 value 之下：噪声必须关于 0 对称，取负值与取正值一样常见",
    ("the releases are centred near {centre:.3g}, not at value: the noise must be symmetric "
     "around 0"):
        "发布值集中在 {centre:.3g} 附近，而不是 value 处：噪声必须关于 0 对称",
    "your noise scale looks like Δ·ε: the scale is Δ/ε": "你的噪声尺度看起来是 Δ·ε：尺度应为 Δ/ε",
    "your noise scale looks like ε/Δ: the scale is Δ/ε": "你的噪声尺度看起来是 ε/Δ：尺度应为 Δ/ε",
    ("the spread or the shape of your noise is not that of Lap(Δ/ε): compare its tails with "
     "P[|noise| > t] = exp(−t/b) for b = {scale:g}"):
        ("你的噪声的离散程度或形状与 Lap(Δ/ε) 不符：把它的尾部与 b = {scale:g} 时的 P[|噪声| > t"
         "] = exp(−t/b) 比较"),
    "your releases are not distributed as value + Lap(Δ/ε); {hint}":
        "你的发布值不服从 value + Lap(Δ/ε) 的分布；{hint}",
    "in the audit, for value={value:g}, Δ={sensitivity:g}, ε={epsilon:g}":
        "在审计中，当 value={value:g}, Δ={sensitivity:g}, ε={epsilon:g} 时",
    ("audit at ε = {epsilon:g}, {runs} runs per input (confidence 1 − 1e-7: the bound is "
     "wrong with probability at most 1e-7): {audit}"):
        ("在 ε = {epsilon:g} 处审计，每个输入运行 {runs} 次（置信水平 1 − 1e-7：该界出错的概率至"
         "多为 1e-7）：{audit}"),
    ("the audit certifies ε ≥ {certified:.3g} > {epsilon:g}: your mechanism adds too little "
     "noise"):
        "审计证实了 ε ≥ {certified:.3g} > {epsilon:g}：你的机制加的噪声太少",
    ("your releases follow value + Lap(Δ/ε) and an audit finds no violation of ε-DP "
     "(mathematically; floating point is another story)"):
        ("你的发布值服从 value + Lap(Δ/ε)，审计也没有发现违反 ε-差分隐私的情况（这是数学上的结论"
         "；浮点数是另一回事）"),
    "smaller": "更小",
    "larger": "更大",
    "that is the textbook scale: rounding to the grid widens the sensitivity":
        "这是教科书中的尺度：舍入到网格会放宽敏感度",
    "that is the scale in grid units: convert it to the query's units":
        "这是以网格单位表示的尺度：把它换算成查询自身的单位",
    "each of the d coordinates can move by half a grid step":
        "d 个坐标中的每一个都可能移动半个网格步长",
    ("your grid step is not the largest power of two g with d·g <= 2**-20·Δ (yours is "
     "{step}): g depends on Δ and d, so compute it at every point"):
        ("你的网格步长不是满足 d·g <= 2**-20·Δ 的最大的 2 的幂 g（你的步长是 {step}）：g 取决于 Δ "
         "和 d，所以要在每个测试点上计算它"),
    "the widened sensitivity floor(Δ/g) + d is in grid units":
        "放宽后的敏感度 floor(Δ/g) + d 是以网格单位表示的",
    "your scale is {direction}; {hint}": "你的尺度{direction}；{hint}",
    "right: the grid costs a factor of at most 1 + 2**-20 in noise":
        "正确：网格使噪声至多增大 1 + 2**-20 倍",
    # The Gaussian and analytic Gaussian mechanisms (dpkit/check/gaussian.py).
    "that is the ℓ1 norm of the worst change; measure the same vector with the ℓ2 norm":
        "这是最坏变化的 ℓ1 范数；请用 ℓ2 范数度量同一个向量",
    "write down the worst change vector for these k and c, then take its ℓ2 norm":
        "写出这些 k 和 c 下最坏的变化向量，再取它的 ℓ2 范数",
    "your function returned {value!r}, which is not the ℓ2 sensitivity; {hint}":
        "你的函数返回了 {value!r}，这不是 ℓ2 敏感度；{hint}",
    "your function is the ℓ2 norm of the worst change one person can make":
        "你的函数就是一个人所能造成的最坏变化的 ℓ2 范数",
    ("your σ {value!r} does not match Theorem A.1 (smaller than the theorem's σ): check the "
     "constant inside the logarithm and how Δ and ε enter"):
        ("你的 σ {value!r} 与定理 A.1 不符（比定理的 σ 小）：检查对数里的常数，以及 Δ 和 ε 是如"
         "何出现的"),
    ("your σ {value!r} does not match Theorem A.1 (larger than the theorem's σ): check the "
     "constant inside the logarithm and how Δ and ε enter"):
        ("你的 σ {value!r} 与定理 A.1 不符（比定理的 σ 大）：检查对数里的常数，以及 Δ 和 ε 是如"
         "何出现的"),
    "it returned {value}": "它返回了 {value}",
    "it raised {error}": "它抛出了 {error}",
    ("at ε={epsilon:g} the classic calibration is not proven private: raise ValueError "
     "(pointing to the analytic Gaussian); {found}"):
        ("当 ε={epsilon:g} 时，经典校准并未被证明满足差分隐私：请抛出 ValueError（并指向解析高"
         "斯机制）；{found}"),
    "ε={epsilon:g}: refused with {error}": "ε={epsilon:g}：以 {error} 拒绝",
    "your classic σ is right, and you refuse ε ≥ 1 where its proof does not hold":
        "你的经典 σ 是正确的，而且你的函数拒绝了其证明不成立的 ε ≥ 1",
    "answer with an integer dimension, got {why}": "请用整数维数作答，得到的是 {why}",
    "at d = {answer} the Gaussian mechanism is not yet ahead":
        "在 d = {answer} 时，高斯机制还没有领先",
    "the Gaussian mechanism is ahead at d = {answer}, but that is not the smallest such d":
        "高斯机制在 d = {answer} 时领先，但这不是满足条件的最小 d",
    ("{why}; {answer} is where σ falls below the Laplace scale b = d/ε, but b is not a "
     "standard deviation: Lap(b) has standard deviation √2·b"):
        ("{why}；{answer} 是 σ 降到拉普拉斯尺度 b = d/ε 以下的地方，但 b 不是标准差：Lap(b) 的标"
         "准差是 √2·b"),
    ("{answer} is not the answer: {why}. Compare the two standard deviations per coordinate "
     "for each d"):
        "{answer} 不是答案：{why}。请对每个 d 比较每个坐标上的两个标准差",
    ("from d = {want} on, the Gaussian mechanism adds less noise per coordinate (ε = "
     "{epsilon:g}, δ = {delta:g})"):
        "从 d = {want} 起，高斯机制在每个坐标上加的噪声更少（ε = {epsilon:g}，δ = {delta:g}）",
    "at d={want}: Laplace std {laplace:.4g}, Gaussian std {gaussian:.4g}":
        "d={want} 时：拉普拉斯标准差 {laplace:.4g}，高斯标准差 {gaussian:.4g}",
    ("at such small δ, Φ computed as (1 + erf)/2 has no correct digits left: compute the "
     "normal tail without forming 1 − (something close to 1)"):
        ("在这么小的 δ 处，按 (1 + erf)/2 计算的 Φ 已没有一位正确的数字：计算正态尾部时不要构造 "
         "1 − (接近 1 的数)"),
    "compare your formula with the theorem term by term": "把你的公式与定理逐项比较",
    "your profile {value!r} is wrong (relative error {error:.1e}); {hint}":
        "你的隐私轮廓 {value!r} 不对（相对误差 {error:.1e}）；{hint}",
    "your profile is accurate from δ ≈ 0.5 down to δ ≈ 1e-25":
        "你的隐私轮廓从 δ ≈ 0.5 到 δ ≈ 1e-25 都是准确的",
    "σ must be positive": "σ 必须为正",
    ("for {point} your σ {value:.10g} is too small: its exact δ is {exact:.6e}, above the "
     "target {delta:g} by a relative {excess:.1e}, more than the {tolerance:.1e} that "
     "rounding in a double-precision δ(σ) can explain. The σ returned must satisfy δ(σ) ≤ δ: "
     "if you bisect, return the end of the bracket where that holds and make the bracket "
     "narrow; if you do, check the accuracy of your δ(σ) at this point"):
        ("当 {point} 时，你的 σ {value:.10g} 太小：它的精确 δ 是 {exact:.6e}，比目标 {delta:g} "
         "高出相对 {excess:.1e}，超过了以双精度计算 δ(σ) 时的舍入所能解释的 {tolerance:.1e}。返"
         "回的 σ 必须满足 δ(σ) ≤ δ：如果你用二分法，请返回区间中满足这一点的那一端，并把区间缩得"
         "足够窄；如果你已经这样做了，请检查你的 δ(σ) 在这个点上的精度"),
    ("for {point} your σ {value:.10g} is private but larger than needed (by a relative "
     "{excess:.1e}): tighten the search"):
        ("当 {point} 时，你的 σ {value:.10g} 满足差分隐私，但比所需的大（相对大 {excess:.1e}）"
         "：把搜索收紧"),
    ("{point}: {value:.10g} meets the target δ (exact δ(σ)/δ − 1 = {excess:.1e}, rounding "
     "allowance {tolerance:.1e}) and is tight"):
        ("{point}：{value:.10g} 达到了目标 δ（精确的 δ(σ)/δ − 1 = {excess:.1e}，舍入容许量 {tole"
         "rance:.1e}），并且是紧的"),
    ("your calibration is tight; at some test point its exact δ is above the target by a "
     "relative {largest:.1e}, within the rounding error of evaluating δ(σ) in double "
     "precision (see the details)"):
        ("你的校准是紧的；在某个测试点上它的精确 δ 比目标高出相对 {largest:.1e}，在以双精度计算 "
         "δ(σ) 的舍入误差之内（见详细信息）"),
    "your calibration is tight, and its exact δ is at most the target at every test point":
        "你的校准是紧的，而且在每个测试点上它的精确 δ 都不超过目标",
    "for σ={sigma:g}, size=4000": "当 σ={sigma:g}, size=4000 时",
    "σ={sigma:g}: sample std {std:.4f}, KS p-value {pvalue:.2g}":
        "σ={sigma:g}：样本标准差 {std:.4f}，KS 检验 p 值 {pvalue:.2g}",
    ("the spread is σ², not σ: numpy's normal(loc, scale) takes the standard deviation, not "
     "the variance"):
        "离散程度是 σ² 而不是 σ：numpy 的 normal(loc, scale) 接受的是标准差，而不是方差",
    "expected N(0, {sigma:g}²), the sample std is {std:.4f}":
        "应为 N(0, {sigma:g}²)，样本标准差是 {std:.4f}",
    "the draws do not follow N(0, σ²) at σ={sigma:g}: {hint}":
        "在 σ={sigma:g} 时，抽样结果不服从 N(0, σ²)：{hint}",
    "your noise has standard deviation σ": "你的噪声的标准差是 σ",
    ("that is a plausible wrong derivative (no published source); differentiate F(√(χ² + ε)) "
     "yourself with the chain rule"):
        "这是一个看似合理的错误导数（没有公开的出处）；请自己用链式法则对 F(√(χ² + ε)) 求导",
    "the sign is wrong": "符号错了",
    "use F'(z) = e^{−z²} and the chain rule for √(χ² + ε)":
        "利用 F'(z) = e^{−z²}，并对 √(χ² + ε) 使用链式法则",
    "your function returned {value!r}, which is not G'(χ); {hint}":
        "你的函数返回了 {value!r}，这不是 G'(χ)；{hint}",
    "your G' is right: Newton's method on G now converges to χ":
        "你的 G' 是正确的：对 G 用牛顿法现在会收敛到 χ",
    # Composition (dpkit/check/composition.py).
    "you have the theorem's first term only; it has a second term, which grows linearly in k":
        "你只算了定理的第一项；定理还有第二项，随 k 线性增长",
    ("your second term looks like k·ε², which is smaller than the theorem's: compare it with "
     "the theorem term by term"):
        "你的第二项看起来是 k·ε²，比定理中的小：把它与定理逐项比较",
    ("2·ε·sqrt(2k ln(1/δ')) is the per-mechanism budget (the chapter's corollary) read "
     "backwards, not the advanced composition theorem"):
        "2·ε·sqrt(2k ln(1/δ')) 是把每个机制的预算（本章的推论）反过来读，而不是高级组合定理",
    "your total {value!r} is too large; {hint}": "你的总量 {value!r} 太大；{hint}",
    "your total {value!r} is too small; {hint}": "你的总量 {value!r} 太小；{hint}",
    "your function computes the total epsilon of the advanced composition theorem":
        "你的函数计算的是高级组合定理的总 epsilon",
    "{point}: got {value}": "{point}：得到 {value}",
    ("at epsilon={epsilon:g} advanced composition never beats k·ε (compare the theorem's "
     "second term alone with k·ε); return None, got {value}"):
        ("当 epsilon={epsilon:g} 时，高级组合永远胜不过 k·ε（单独把定理的第二项与 k·ε 比较）；应"
         "返回 None，得到的是 {value}"),
    "for {point} expected a positive integer k, got {value}":
        "当 {point} 时，k 应为正整数，得到的是 {value}",
    ("at k={k} the advanced composition total is not strictly below k·ε: advanced composition "
     "does not win there yet"):
        "k={k} 处高级组合的总量并不严格小于 k·ε：高级组合在这里还没有胜出",
    ("at k={k} advanced composition wins, but it already wins at a smaller k; return the "
     "first one"):
        "k={k} 处高级组合胜出，但它在更小的 k 处就已经胜出；请返回第一个",
    "for {point}: {why}": "当 {point} 时：{why}",
    ("your crossover matches advanced against basic composition (29 at ε = 0.1, δ' = 1e-5; "
     "never at ε = 1)"):
        ("你的交叉点与高级组合对基本组合的比较一致（ε = 0.1、δ' = 1e-5 时为 29；ε = 1 时永不交叉"
         "）"),
    "expected a positive number, got {value}": "应为正数，得到的是 {value}",
    ("your epsilon {epsilon:.6g}: {k} queries compose to {composed} (optimal composition over "
     "all epsilon-DP mechanisms, delta'={delta_prime:g})"):
        ("你的 epsilon {epsilon:.6g}：{k} 个查询组合后为 {composed}（对所有 epsilon-差分隐私机制"
         "的最优组合，delta'={delta_prime:g}）"),
    "basic composition would allow {basic:.6g}": "基本组合允许 {basic:.6g}",
    ("{k} queries at epsilon={epsilon:.6g} exceed the budget: even optimal composition gives "
     "{composed} > {total:g}"):
        ("{k} 个 epsilon={epsilon:.6g} 的查询超出了预算：即使最优组合也得到 {composed} > {total:"
         "g}"),
    ("optimal() rounds its total up (the safe direction); the exact total of your epsilon is "
     "within the budget up to floating-point rounding"):
        ("optimal() 把总量向上舍入（安全的方向）；你的 epsilon 的精确总量在浮点舍入范围内没有超"
         "出预算"),
    ("valid but wasteful: {k} queries at epsilon={epsilon:.6g} compose to {composed:.4f}, "
     "below the budget {total:g}; a larger epsilon (by more than 1%) still fits"):
        ("可行但浪费：{k} 个 epsilon={epsilon:.6g} 的查询组合后为 {composed:.4f}，低于预算 {tota"
         "l:g}；更大的 epsilon（大 1% 以上）仍在预算之内"),
    ("{k} queries at epsilon={epsilon:.6g} fit the budget ({composed:.4f} <= {total:g}), "
     "{ratio:.2f}× what basic composition allows"):
        ("{k} 个 epsilon={epsilon:.6g} 的查询在预算之内（{composed:.4f} <= {total:g}），是基本组"
         "合所允许值的 {ratio:.2f} 倍"),
    "expected a positive integer number of queries, got {value}":
        "查询个数应为正整数，得到的是 {value}",
    "{n} is far more than needed": "{n} 远多于所需",
    "success probability with {n} answers: {probability:.4f}":
        "用 {n} 个回答的成功概率：{probability:.4f}",
    ("{n} answers at ε = {epsilon:g} recover the count with probability ≥ {probability:g}, "
     "and fewer do not"):
        "ε = {epsilon:g} 时 {n} 个回答以 ≥ {probability:g} 的概率恢复出计数，更少则不能",
    ("{n} is too few: with {n} answers the success probability is {success:.4f} < "
     "{probability:g}"):
        "{n} 太少：用 {n} 个回答时成功概率为 {success:.4f} < {probability:g}",
    ("{n} answers succeed with probability ≥ {probability:g}, but so does a smaller number; "
     "the question asks for the smallest"):
        "{n} 个回答以 ≥ {probability:g} 的概率成功，但更少的个数也能；题目要的是最小的个数",
    "the Laplace loss never exceeds epsilon0: what does that make δ(ε) for ε ≥ epsilon0?":
        "拉普拉斯机制的隐私损失从不超过 epsilon0：那么当 ε ≥ epsilon0 时 δ(ε) 是多少？",
    ("that is P[L > ε], the probability of a large loss; δ(ε) is the expectation of (1 − e^(ε "
     "− L))₊"):
        "这是 P[L > ε]，即隐私损失较大的概率；δ(ε) 是 (1 − e^(ε − L))₊ 的期望",
    "add the contributions of the atom at epsilon0 and of the density on (ε, epsilon0)":
        "把 epsilon0 处的点质量与 (ε, epsilon0) 上的密度这两部分的贡献相加",
    "for {point} your value {value!r} is not δ(ε); {hint}":
        "当 {point} 时，你的值 {value!r} 不是 δ(ε)；{hint}",
    "your function is the privacy profile of the Laplace mechanism":
        "你的函数就是拉普拉斯机制的隐私轮廓",
    # The base-2 exponential mechanism (dpkit/check/exponential.py).
    "Expected an integer loss, got {why}.": "损失应为整数，得到的是 {why}。",
    "The weight of loss {loss} is still positive: the threshold is larger.":
        "损失 {loss} 的权重仍为正：阈值还要更大。",
    "Loss {loss} already underflows: look for a smaller threshold.":
        "损失 {loss} 已经下溢：请找更小的阈值。",
    ("Loss {loss} is the first whose weight is exactly 0.0: every outcome at or beyond it can "
     "never be drawn."):
        "损失 {loss} 是权重恰好为 0.0 的第一个损失：损失达到或超过它的结果都永远不会被抽到。",
    "Expected a dpkit.exponential.Eta such as Eta(x, {y}), got {answer!r}.":
        "应为 dpkit.exponential.Eta（例如 Eta(x, {y})），得到的是 {answer!r}。",
    "The exercise fixes y = {y} and z = 1: answer with Eta(x, {y}).":
        "练习固定 y = {y} 和 z = 1：请用 Eta(x, {y}) 作答。",
    "guarantee 2·ln(2)·η·Δ = {spent:.6g} for Δ = {sensitivity:g}":
        "保证 2·ln(2)·η·Δ = {spent:.6g}（Δ = {sensitivity:g}）",
    "budget ε = {epsilon:g}": "隐私预算 ε = {epsilon:g}",
    ("Off by one: this x is one step too small, so η spends just over the budget. Check the "
     "direction of your last rounding step."):
        "差一错误：这个 x 小了一步，所以 η 的花费刚好超出预算。检查你最后一步舍入的方向。",
    ("This η spends more than the budget: the factor 2 of the exponential mechanism and Δ "
     "both multiply η."):
        "这个 η 的花费超出了预算：指数机制的因子 2 和 Δ 都要乘到 η 上。",
    ("Off by one: private, but x is one step larger than it needs to be; the next smaller x "
     "(a larger η) is private too."):
        "差一错误：满足差分隐私，但 x 比所需的大了一步；下一个更小的 x（更大的 η）也满足差分隐私。",
    ("Private, but not the smallest x: it uses {share:.1%} of the budget, and a smaller x (a "
     "larger η) is private too."):
        ("满足差分隐私，但不是最小的 x：它用掉了预算的 {share:.1%}，而更小的 x（更大的 η）也满足"
         "差分隐私。"),
    "x = {x} is the smallest private choice: η uses {share:.2%} of the budget.":
        "x = {x} 是满足差分隐私的最小选择：η 用掉了预算的 {share:.2%}。",
    "Expected a number of bits (an integer), got {why}.": "应为位数（一个整数），得到的是 {why}。",
    "your answer: {answer} bits": "你的答案：{answer} 位",
    ("Too few bits: some sum of weights would be rounded. Count the bits a sum of weights "
     "needs below the binary point and above it."):
        "位数太少：某些权重之和会被舍入。数一数权重之和在二进制小数点以下和以上各需要多少位。",
    "Enough, but not the smallest bound that always suffices.":
        "足够，但不是总能满足要求的最小界。",
    "That is the analytic precision: Y·K + bitlen(n).": "这就是解析精度：Y·K + bitlen(n)。",
    ("does it convert the weights to floating point somewhere? A float holds about 16 digits "
     "and nothing beyond 1.8e308; the exact sampler compares integers only."):
        ("它是否在某处把权重转换成了浮点数？一个浮点数只有大约 16 位有效数字，且不超过 1.8e308；"
         "精确采样器只比较整数。"),
    ("They match rng.bits({k}) reduced modulo Σ w: 2**{k} is not a multiple of Σ w, so the "
     "smallest remainders come up more often than the others. Reducing modulo the total is "
     "biased; when the bits fall at or above the total, reject them and draw again."):
        ("它们与 rng.bits({k}) 对 Σ w 取模的结果相符：2**{k} 不是 Σ w 的倍数，所以最小的那些余数"
         "出现得比其他的更频繁。对总量取模是有偏的；当这些随机位构成的数达到或超过总量时，应拒绝"
         "它们并重新抽取。"),
    "small weights": "小权重",
    "weights near 10**400": "接近 10**400 的权重",
    "On {what}": "在{what}上",
    "On {what}, the sampler must return an int index in [0, {outcomes}), got {value}.":
        "在{what}上，采样器必须返回 [0, {outcomes}) 中的 int 下标，得到的是 {value}。",
    "{what}: observed {observed}, expected {expected}, chi-square p-value {pvalue:.3g}":
        "{what}：观测频数 {observed}，期望频数 {expected}，卡方检验 p 值 {pvalue:.3g}",
    "On {what}, the frequencies do not match w_i / Σ w. {hint}":
        "在{what}上，频率与 w_i / Σ w 不符。{hint}",
    "On {what}, the frequencies do not match w_i / Σ w.": "在{what}上，频率与 w_i / Σ w 不符。",
    ("The sampler draws each index with probability w_i / Σ w, using random bits and integer "
     "arithmetic only."):
        "采样器以概率 w_i / Σ w 抽取每个下标，只用随机位和整数运算。",
    # The sparse vector technique (dpkit/check/svt.py).
    "for epsilon={epsilon:g}, c={c}": "当 epsilon={epsilon:g}, c={c} 时",
    ("{where}, your function returned {why}; the pair (threshold scale, query scale) is "
     "expected"):
        "{where}，你的函数返回了 {why}；应返回数对（阈值的尺度, 查询的尺度）",
    "epsilon={epsilon:g}, c={c}: scales {pair} are right":
        "epsilon={epsilon:g}, c={c}：尺度 {pair} 正确",
    "the two scales are swapped: the queries get the larger noise":
        "两个尺度颠倒了：查询得到的是较大的噪声",
    "these are AboveThreshold's scales for the whole ε; each of the c runs only gets ε/c":
        "这是 AboveThreshold 对整个 ε 的尺度；c 次运行中的每一次只得到 ε/c",
    "too little noise: this would not be ε-DP": "噪声太少：这不满足 ε-差分隐私",
    "more noise than needed: private, but less accurate than Sparse":
        "噪声比所需的多：满足 ε-差分隐私，但不如 Sparse 准确",
    "{where} the scales {pair} are wrong: {hint}": "{where}，尺度 {pair} 不对：{hint}",
    ("each of the c runs of AboveThreshold gets ε/c: threshold noise Lap(2c/ε), query noise "
     "Lap(4c/ε)"):
        "AboveThreshold 的 c 次运行每次得到 ε/c：阈值噪声 Lap(2c/ε)，查询噪声 Lap(4c/ε)",
    "the cost must grow with c: each positive answer pays for its own shift":
        "代价必须随 c 增长：每个肯定回答都要为它自己的平移付出代价",
    ("the threshold is paid for c times, but this variant draws its noisy threshold only once "
     "(it does not restart like Sparse): how many times is the threshold's shift paid?"):
        ("阈值的代价算了 c 次，但这个变体只抽取一次带噪阈值（它不像 Sparse 那样重新开始）：阈值"
         "的平移要付几次代价？"),
    "too small: count the cost of every shift the proof makes":
        "太小：把证明中每一次平移的代价都算上",
    "too large: each shift costs its size divided by its noise's scale":
        "太大：每次平移的代价是它的大小除以其噪声的尺度",
    "{where} the cost {value!r} is wrong: {hint}": "{where}，代价 {value!r} 不对：{hint}",
    "epsilon={epsilon:g}, c={c}: {value:g} is right": "epsilon={epsilon:g}, c={c}：{value:g} 正确",
    "the variant claims ε but costs (1 + 6c)ε/4: 1.75ε already for c = 1":
        "这个变体声称 ε，实际代价却是 (1 + 6c)ε/4：c = 1 时就已是 1.75ε",
    "pulled more than {limit} queries from an endless stream":
        "从无尽的流中取出了超过 {limit} 个查询",
    "evaluated more than {limit} queries of an endless stream":
        "对无尽流中超过 {limit} 个查询求了值",
    "on five queries far below the threshold": "在五个远低于阈值的查询上",
    ("when no query passes, return None, got {value}: a made-up index looks like a real "
     "answer and fails silently"):
        ("当没有查询通过时，应返回 None，得到的是 {value}：编造的下标看起来像真实答案，会悄无声"
         "息地出错"),
    "returns None when nothing passes": "没有查询通过时返回 None",
    "on an endless stream whose query 3 is far above the threshold":
        "在一个第 3 号查询远高于阈值的无尽流上",
    ("{where}, your function returned {index}: off by one, one more than the index of the "
     "query that passed. Indices count from 0 (the first query is index 0, as "
     "enumerate(queries) counts)"):
        ("{where}，你的函数返回了 {index}：差一错误，比通过的查询的下标多一。下标从 0 开始（第一个"
         "查询的下标是 0，与 enumerate(queries) 的计数一致）"),
    ("{where}, your function returned {index}: off by one, one less than the index of the "
     "query that passed. Indices count from 0 (the first query is index 0, as "
     "enumerate(queries) counts)"):
        ("{where}，你的函数返回了 {index}：差一错误，比通过的查询的下标少一。下标从 0 开始（第一个"
         "查询的下标是 0，与 enumerate(queries) 的计数一致）"),
    ("{where}, your function returned {why}; AboveThreshold returns the index of a query, or "
     "None"):
        "{where}，你的函数返回了 {why}；AboveThreshold 返回某个查询的下标，或 None",
    ("{where}, expected 3, got {value}; take the queries one at a time (no len(), no list()) "
     "and stop at the first pass"):
        ("{where}，应返回 3，得到的是 {value}；一次取一个查询（不用 len()，不用 list()），并在第一"
         "次通过时停止"),
    "stop evaluating at the first pass: query 3 passed but {evaluated} queries were evaluated":
        "在第一次通过时停止求值：第 3 号查询已经通过，却有 {evaluated} 个查询被求值",
    "stops at the first pass of an endless stream": "在无尽流上于第一次通过时停止",
    "on {m} queries answering {answer:g} at ε = {epsilon:g}":
        "在 {m} 个回答为 {answer:g} 的查询上，ε = {epsilon:g} 时",
    ("{m} queries with answer {answer:g}, ε = {epsilon:g}: None in {share:.3f} of runs, "
     "expected {want:.3f} (p = {p:.2g})"):
        ("{m} 个回答为 {answer:g} 的查询，ε = {epsilon:g}：{share:.3f} 的运行返回 None，期望 {wa"
         "nt:.3f}（p = {p:.2g}）"),
    ("the outcome frequencies do not match threshold noise Lap(2/ε) and query noise Lap(4/ε): "
     "None in {share:.3f} of runs, expected {want:.3f}; draw the threshold noise once and a "
     "fresh query noise per query, or your noise scales are not 2/ε and 4/ε (larger scales "
     "change these frequencies too)"):
        ("结果的频率与阈值噪声 Lap(2/ε) 和查询噪声 Lap(4/ε) 不符：{share:.3f} 的运行返回 None，"
         "期望 {want:.3f}；请只抽一次阈值噪声，并为每个查询抽一个新的查询噪声，否则就是你的噪声"
         "尺度不是 2/ε 和 4/ε（更大的尺度也会改变这些频率）"),
    ("your AboveThreshold returns None honestly, reads a stream lazily and adds the right "
     "noise"):
        "你的 AboveThreshold 如实返回 None，惰性地读取流，并加上了正确的噪声",
    "on 400 values of 20": "在 400 个值为 20 的数据上",
    "on 400 values of 20 and 600 zeros": "在 400 个值为 20 和 600 个 0 的数据上",
    "values near 1000": "接近 1000 的值",
    "on {name}": "在 {name} 上",
    ("on {name} ({rows} rows) your average is the true mean to 12 significant digits: it has "
     "no noise; the noise must not depend on the number of rows"):
        ("在 {name}（{rows} 行）上，你的平均值与真实均值的前 12 位有效数字相同：它没有噪声；噪声"
         "不能取决于行数"),
    "a result near 1.0 is a noisy sum divided by a noisy sum: divide by a noisy count of rows":
        "接近 1.0 的结果是带噪的和除以带噪的和：应除以带噪的行数计数",
    ("check how the budget is split between the three steps and what sensitivity each noisy "
     "release is calibrated to"):
        "检查预算如何在三个步骤之间分配，以及每个带噪发布值校准所依据的敏感度",
    ("on {name} (true mean {truth:.4g}) got {value:.4g}, more than {tolerance:.3g} away; "
     "{hint}"):
        "在 {name} 上（真实均值 {truth:.4g}）得到 {value:.4g}，偏离超过 {tolerance:.3g}；{hint}",
    "{name}, seed {seed}: {value:.4g} (true {truth:.4g})":
        "{name}，种子 {seed}：{value:.4g}（真实值 {truth:.4g}）",
    "on 2700 zeros and 300 values of 200": "在 2700 个 0 和 300 个值为 200 的数据上",
    ("2700 zeros and 300 values of 200: {wide} of {runs} runs were off by more than {cut:.3g} "
     "(at least {needed} expected)"):
        ("2700 个 0 和 300 个值为 200 的数据：{runs} 次运行中有 {wide} 次偏离超过 {cut:.3g}（应"
         "至少有 {needed} 次）"),
    ("on 2700 zeros and 300 values of 200, only {wide} of {runs} averages were as far from "
     "the truth as the clipped sum's noise makes them at least half the time: too little "
     "noise for ε-DP; check the sensitivity the noisy sum is calibrated to"):
        ("在 2700 个 0 和 300 个值为 200 的数据上，{runs} 个平均值中只有 {wide} 个与真值的偏离达"
         "到了裁剪后求和的噪声至少一半时间会造成的程度：噪声太少，不满足 ε-差分隐私；检查带噪的"
         "和所校准的敏感度"),
    ("adding rows of 0 changed your average exactly as dividing by the exact number of rows "
     "would: the number of rows is private too, so the denominator must be released with noise"):
        ("增加值为 0 的行后，你的平均值的变化恰好与除以确切行数时一样：行数也是私密的，所以分母必"
         "须加噪发布"),
    "the denominator is noisy": "分母带有噪声",
    "your average divides a clipped sum with enough noise for ε-DP by a noisy count of rows":
        "你的平均值用一个带足够噪声（满足 ε-差分隐私）的裁剪后的和，除以带噪的行数计数",
    # Texts kept as constants: why a withheld error message is missing
    # (dpkit.check._common.WITHHELD), the open-probability range of the introduction's
    # checkers, and the bits-only source's refusals (dpkit.check.exponential.BITS_ONLY_REFUSAL
    # for each of REFUSED_DRAWS), which stay English in the error itself because a grader
    # matches them, and are translated where a verdict quotes them.
    ("its message is not shown once hidden tests have run, since it could carry their "
     "inputs: run that cell in your notebook to read it"):
        ("隐藏测试运行后不再显示它的消息，因为其中可能带有隐藏测试的输入：请在你的笔记本中"
         "运行那个单元格来查看"),
    "a probability strictly between 0 and 1 is needed": "需要一个严格介于 0 和 1 之间的概率",
    "the sampler called rng.bytes: the exercise allows rng.bits(k) only":
        "采样器调用了 rng.bytes：练习只允许使用 rng.bits(k)",
    "the sampler called rng.randbelow: the exercise allows rng.bits(k) only":
        "采样器调用了 rng.randbelow：练习只允许使用 rng.bits(k)",
    "the sampler called rng.bernoulli: the exercise allows rng.bits(k) only":
        "采样器调用了 rng.bernoulli：练习只允许使用 rng.bits(k)",
    "the sampler called rng.uniform (a float): the exercise allows rng.bits(k) only":
        "采样器调用了 rng.uniform（一个浮点数）：练习只允许使用 rng.bits(k)",
    "the sampler called rng.uint64: the exercise allows rng.bits(k) only":
        "采样器调用了 rng.uint64：练习只允许使用 rng.bits(k)",
    "the sampler called rng.uniforms (floats): the exercise allows rng.bits(k) only":
        "采样器调用了 rng.uniforms（浮点数）：练习只允许使用 rng.bits(k)",
    "the sampler called rng.numpy_generator: the exercise allows rng.bits(k) only":
        "采样器调用了 rng.numpy_generator：练习只允许使用 rng.bits(k)",
}}
