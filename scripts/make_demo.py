"""Write klue-viz's embedded demo: a small KLUE-like set in the exact official formats, and two runs per task.

The examples are our own sentences (no KLUE data); the two runs per task make different, realistic
kinds of mistakes, decided by the rules below with a fixed seed, so the demo is reproducible:

    python scripts/make_demo.py      # rewrites klue_viz/demo/
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "klue_viz" / "demo"
BENCH = OUT / "klue_benchmark"
RUNS = OUT / "runs"
#: Marks every demo guid (after the example number, before NER's and DP's source, before WoS's turn), so that no
#: demo guid is a real KLUE guid: real predictions opened against the demo gold match nothing (issue 19, item 8)
#: instead of matching the few ids that happen to be the same, on other sentences.
DEMO = "-demo"  # klue_viz.reading.demo.DEMO_MARK (the script stands alone: it writes that package)


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def write_jsonl(path: Path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# YNAT
YNAT_HF = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
YNAT = [
    ("IT과학", "IT과학", "삼성전자 차세대 반도체 공정 양산 돌입"), ("IT과학", "IT", "카카오 인공지능 번역 서비스 한국어 성능 개선"),
    ("IT과학", "IT과학", "누리호 4차 발사 성공…위성 13기 궤도 안착"), ("IT과학", "경제", "통신3사 5G 요금제 개편 경쟁 본격화"),
    ("경제", "경제", "코스피 외국인 매수에 2,700선 회복"), ("경제", "경제", "한국은행 기준금리 3.25%로 동결"),
    ("경제", "경제", "수출 석 달 연속 증가…반도체가 견인"), ("경제", "사회", "전세 사기 피해 지원 대출 한도 확대"),
    ("사회", "사회", "서울 지하철 파업 첫날 출근길 혼잡"), ("사회", "사회", "폭염 특보 확대…온열질환자 급증"),
    ("사회", "사회", "경찰 보이스피싱 조직 총책 검거"), ("사회", "생활문화", "초등학교 늘봄학교 전국 확대 시행"),
    ("생활문화", "생활문화", "국립중앙박물관 여름 특별전 관람객 10만 돌파"), ("생활문화", "생활문화", "가을 단풍 절정 시기 예년보다 늦어져"),
    ("생활문화", "생활문화", "한강 불꽃축제 주말 100만 인파 몰려"), ("생활문화", "사회", "독감 예방접종 다음 달부터 무료 시행"),
    ("세계", "세계", "미국 연준 기준금리 0.25%p 인하"), ("세계", "세계", "일본 총리 중의원 해산 조기 총선 시사"),
    ("세계", "세계", "유럽연합 인공지능 규제법 시행 돌입"), ("세계", "정치", "유엔 안보리 북한 미사일 대응 긴급회의"),
    ("스포츠", "스포츠", "손흥민 시즌 10호골…토트넘 3연승"), ("스포츠", "스포츠", "프로야구 한국시리즈 7차전 끝에 우승"),
    ("스포츠", "스포츠", "김연경 은퇴 경기 만원 관중 속 마무리"), ("스포츠", "생활문화", "마라톤 대회 참가자 3만 명 도심 달려"),
    ("정치", "정치", "국회 예산안 법정 시한 내 처리 불발"), ("정치", "정치", "여야 대표 회담 민생법안 처리 합의"),
    ("정치", "정치", "대통령 국무회의서 규제 개혁 강조"), ("정치", "세계", "외교부 장관 방미…한미 외교장관 회담"),
]


def ynat(rng: random.Random) -> None:
    records, run_a, run_b = [], [], []
    for k, (label, section, title) in enumerate(YNAT):
        guid = f"ynat-v1_dev_{k:05d}{DEMO}"
        votes = [label, label, label if k % 5 else section]
        records.append({
            "guid": guid, "title": title, "predefined_news_category": section, "label": label,
            "annotations": {"annotators": ["03", "11", "17"], "annotations": {
                "first-scope": votes, "second-scope": ["해당없음", section if section != label else "해당없음", "해당없음"], "third-scope": ["해당없음"] * 3}},
            "url": f"https://news.example.kr/read.nhn?sid1={100 + YNAT_HF.index(label)}&oid=001&aid={k:010d}",
            "date": f"2024.{(k % 9) + 1:02d}.{(k % 27) + 1:02d}. 오후 {(k % 11) + 1}:{(k * 7) % 60:02d}",
        })
        # Run A confuses 사회 and 생활문화 and follows the section it was filed under; gives probabilities.
        pred_a = label
        if label in ("사회", "생활문화") and (section != label or rng.random() < 0.3):
            pred_a = "생활문화" if label == "사회" else "사회"
        elif section != label and rng.random() < 0.5:
            pred_a = section
        probs = [0.02] * 7
        probs[YNAT_HF.index(pred_a)] = 0.7
        if pred_a != label:
            probs[YNAT_HF.index(label)] = 0.18
        total = sum(probs)
        run_a.append({"guid": guid, "label": pred_a, "probs": [round(p / total, 4) for p in probs]})
        # Run B writes Hugging Face integer ids and mixes up 세계/정치 and IT과학/경제.
        pred_b = {"세계": "정치", "IT과학": "경제"}.get(label, label) if rng.random() < 0.45 else label
        run_b.append({"guid": guid, "label": YNAT_HF.index(pred_b)})
    write_json(BENCH / "ynat-v1.1" / "ynat-v1.1_dev.json", records)
    write_jsonl(RUNS / "ynat" / "bert-base.jsonl", run_a)
    write_jsonl(RUNS / "ynat" / "llm-zero-shot.jsonl", run_b)


# ---------------------------------------------------------------------------------------------
# STS
STS = [
    ("airbnb-rtt", "숙소 위치가 역에서 가까워서 좋았어요.", "숙소가 역과 가까운 곳에 있어서 좋았습니다.", [5, 5, 4, 5, 5, 4, 5]),
    ("airbnb-rtt", "호스트가 정말 친절하게 맞아주셨습니다.", "주인이 매우 친절하게 환영해 주었습니다.", [5, 4, 4, 5, 4, 4, 5]),
    ("airbnb-rtt", "방이 사진보다 조금 작았어요.", "방은 사진에 보이는 것보다 약간 작았습니다.", [5, 5, 5, 4, 5, 5, 4]),
    ("airbnb-rtt", "밤에는 주변이 조금 시끄러웠어요.", "저녁이면 근처가 꽤 조용했습니다.", [1, 0, 1, 1, 0, 1, 2]),
    ("airbnb-sampled", "체크인 과정이 아주 간단했어요.", "주방에 필요한 도구가 다 있었어요.", [0, 0, 1, 0, 0, 0, 0]),
    ("airbnb-sampled", "수건과 침구가 깨끗했습니다.", "침대 시트와 수건 모두 청결했어요.", [4, 4, 5, 4, 3, 4, 4]),
    ("airbnb-sampled", "근처에 맛집이 많아서 편했어요.", "주변에 식당이 많아 식사하기 좋았습니다.", [4, 3, 4, 4, 3, 3, 4]),
    ("airbnb-sampled", "와이파이가 자주 끊겼어요.", "엘리베이터가 없어서 짐 옮기기 힘들었어요.", [0, 1, 0, 0, 0, 1, 0]),
    ("policy-rtt", "정부는 청년 주거 지원을 확대할 계획이다.", "정부가 청년들의 주거 지원을 늘릴 예정이다.", [5, 5, 4, 5, 5, 5, 4]),
    ("policy-rtt", "신청은 온라인으로만 가능합니다.", "신청은 온라인에서만 할 수 있습니다.", [5, 5, 5, 5, 5, 4, 5]),
    ("policy-rtt", "지원금은 다음 달 말까지 지급됩니다.", "지원금 지급은 이번 달 초에 끝났습니다.", [1, 2, 1, 1, 2, 1, 1]),
    ("policy-rtt", "소상공인 대출 이자를 일부 감면한다.", "소상공인의 대출 이자 일부를 줄여 준다.", [5, 4, 5, 5, 4, 5, 5]),
    ("policy-sampled", "미세먼지 저감을 위해 차량 2부제를 시행한다.", "공공기관 주차장은 주말에 개방된다.", [1, 0, 1, 1, 0, 0, 1]),
    ("policy-sampled", "65세 이상은 독감 백신을 무료로 맞을 수 있다.", "노인은 독감 예방접종 비용이 무료이다.", [4, 4, 3, 4, 4, 3, 4]),
    ("policy-sampled", "전기차 보조금 신청이 시작되었다.", "전기차 구매 지원금 접수가 시작됐다.", [5, 4, 5, 4, 5, 4, 4]),
    ("policy-sampled", "출산 장려금이 인상된다.", "육아휴직 기간이 늘어난다.", [2, 1, 2, 2, 1, 2, 2]),
    ("paraKQC-para", "내일 아침 7시에 알람 맞춰 줘.", "내일 오전 일곱 시로 알람 설정해 줘.", [5, 5, 5, 5, 5, 5, 4]),
    ("paraKQC-para", "거실 불 좀 꺼 줄래?", "거실 조명을 꺼 줘.", [5, 4, 5, 5, 4, 5, 5]),
    ("paraKQC-para", "이번 주 날씨 어때?", "이번 주말 날씨 알려 줘.", [3, 3, 4, 3, 2, 3, 3]),
    ("paraKQC-para", "음악 소리 좀 줄여 줘.", "음악 볼륨을 키워 줘.", [1, 1, 2, 1, 1, 2, 1]),
    ("paraKQC-sampled", "오늘 일정 알려 줘.", "에어컨 온도를 낮춰 줘.", [0, 0, 0, 0, 0, 0, 0]),
    ("paraKQC-sampled", "가까운 약국 찾아 줘.", "근처에 있는 약국을 검색해 줘.", [5, 4, 4, 5, 5, 4, 4]),
    ("paraKQC-sampled", "엄마한테 전화 걸어 줘.", "엄마에게 문자 보내 줘.", [2, 2, 1, 2, 3, 2, 2]),
    ("paraKQC-sampled", "택시 불러 줄 수 있어?", "택시 좀 호출해 줘.", [4, 5, 4, 4, 5, 4, 4]),
]


def sts(rng: random.Random) -> None:
    records, run_a, run_b = [], [], []
    for k, (source, s1, s2, votes) in enumerate(STS):
        guid = f"klue-sts-v1_dev_{k:05d}{DEMO}"
        real = sum(votes) / len(votes)
        counts = [votes.count(v) for v in range(6)]
        records.append({
            "guid": guid, "source": source, "sentence1": s1, "sentence2": s2,
            "labels": {"label": round(real, 1), "real-label": real, "binary-label": int(real >= 3)},
            "annotations": {"agreement": ":".join(map(str, counts)), "annotators": ["02", "05", "07", "10", "12", "14", "19"], "annotations": votes},
        })
        # Run A: close, but over-scores lexically different sampled pairs that share a topic.
        bias = 0.9 if source.endswith("sampled") and real < 3 else 0.0
        run_a.append({"guid": guid, "score": round(min(5, max(0, real + bias + rng.gauss(0, 0.35))), 3)})
        # Run B: squeezed towards the middle of the scale (a regression model that under-commits).
        run_b.append({"guid": guid, "score": round(2.5 + (real - 2.5) * 0.45 + rng.gauss(0, 0.3), 3)})
    write_json(BENCH / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json", records)
    write_jsonl(RUNS / "sts" / "roberta-large.jsonl", run_a)
    write_jsonl(RUNS / "sts" / "mean-pooling.jsonl", run_b)


# ---------------------------------------------------------------------------------------------
# NLI: premise, then (hypothesis, gold, votes of label2..label5) per label
NLI = [
    ("wikipedia", "세종대왕은 훈민정음을 창제하여 1446년에 반포하였다.", [
        ("훈민정음은 15세기에 반포되었다.", "entailment"), ("세종대왕은 한글 외에 측우기도 직접 만들었다.", "neutral"), ("훈민정음은 1500년대에 처음 만들어졌다.", "contradiction")]),
    ("airbnb", "숙소는 해변에서 걸어서 5분 거리에 있고 주차는 불가능합니다.", [
        ("숙소에서 해변까지 걸어갈 수 있다.", "entailment"), ("숙소에는 수영장이 있다.", "neutral"), ("숙소에 차를 세울 수 있다.", "contradiction")]),
    ("NSMC", "배우들 연기는 좋았지만 결말이 너무 허무했다.", [
        ("결말이 아쉬웠다.", "entailment"), ("이 영화는 흥행에 성공했다.", "neutral"), ("결말이 완벽하게 마무리되었다.", "contradiction")]),
    ("wikinews", "서울시는 다음 달부터 심야버스 노선을 5개 늘린다고 밝혔다.", [
        ("서울시의 심야버스 노선이 늘어난다.", "entailment"), ("새 노선은 모두 강남을 지난다.", "neutral"), ("서울시는 심야버스 운행을 중단한다.", "contradiction")]),
    ("policy", "올해부터 만 65세 이상 어르신은 대상포진 예방접종을 무료로 받을 수 있다.", [
        ("어르신은 대상포진 예방접종 비용을 내지 않는다.", "entailment"), ("예방접종은 보건소에서만 가능하다.", "neutral"), ("대상포진 예방접종은 모든 연령이 유료이다.", "contradiction")]),
    ("wikitree", "그 가수는 데뷔 10년 만에 첫 단독 콘서트를 열었다.", [
        ("그 가수는 단독 콘서트를 열었다.", "entailment"), ("콘서트 티켓은 1분 만에 매진되었다.", "neutral"), ("그 가수는 데뷔하자마자 단독 콘서트를 열었다.", "contradiction")]),
    ("airbnb", "체크인은 오후 3시 이후이며 셀프 체크인이 가능합니다.", [
        ("호스트를 만나지 않고도 체크인할 수 있다.", "entailment"), ("체크아웃은 오전 11시이다.", "neutral"), ("체크인은 오전 10시부터 가능하다.", "contradiction")]),
    ("NSMC", "이 영화는 두 번 봐도 지루하지 않았다.", [
        ("영화가 재미있었다.", "entailment"), ("이 영화는 세 시간짜리이다.", "neutral"), ("영화가 지루해서 한 번도 끝까지 못 봤다.", "contradiction")]),
]


def nli(rng: random.Random) -> None:
    records, run_a, run_b = [], [], []
    k = 0
    for source, premise, hyps in NLI:
        for hypothesis, gold in hyps:
            guid = f"klue-nli-v1_dev_{k:05d}{DEMO}"
            votes = [gold] * 4
            if k % 4 == 2:
                votes[rng.randrange(4)] = "neutral" if gold != "neutral" else "entailment"
            records.append({"guid": guid, "source": source, "premise": premise, "hypothesis": hypothesis, "gold_label": gold,
                            "author": gold, "label2": votes[0], "label3": votes[1], "label4": votes[2], "label5": votes[3]})
            # Run A calls neutral hypotheses that overlap the premise "entailment".
            pred_a = "entailment" if gold == "neutral" and rng.random() < 0.55 else gold
            # Run B misses contradictions made by a changed number or time, calling them neutral; names, not ids.
            pred_b = "neutral" if gold == "contradiction" and re.search(r"\d|오전|오후|년", hypothesis) else gold
            if gold == "entailment" and rng.random() < 0.2:
                pred_b = "neutral"
            run_a.append({"guid": guid, "label": pred_a})
            run_b.append({"guid": guid, "label": pred_b})
            k += 1
    write_json(BENCH / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json", records)
    write_jsonl(RUNS / "nli" / "roberta-base.jsonl", run_a)
    write_jsonl(RUNS / "nli" / "llm-few-shot.jsonl", run_b)


# ---------------------------------------------------------------------------------------------
# NER (official markup; the character lines are derived from it)
NER = [
    ("wikitree", "<경찰:OG>은 <지난 3일:DT> <서울 강남구:LC>의 한 주택에서 <김:PS>씨를 체포했다."),
    ("wikitree", "<삼성전자:OG>는 <2024년:DT> 매출이 <300조 원:QT>을 넘었다고 밝혔다."),
    ("wikitree", "<이순신:PS> 장군의 동상은 <광화문 광장:LC>에 서 있다."),
    ("wikitree", "<한국은행:OG>은 <오전 10시:TI>에 기준금리 결정을 발표한다."),
    ("wikitree", "<부산:LC>에서 열린 영화제에는 <10만 명:QT>이 다녀갔다."),
    ("wikitree", "<박지성:PS>은 <맨체스터 유나이티드:OG>에서 <7년:DT> 동안 뛰었다."),
    ("wikitree", "<기상청:OG>은 <내일:DT> <제주:LC>에 <50mm:QT>의 비가 내린다고 예보했다."),
    ("wikitree", "<서울시:OG>는 <밤 11시:TI>부터 심야버스 <5개:QT> 노선을 운행한다."),
    ("wikitree", "<유엔:OG> 사무총장은 <뉴욕:LC>에서 기자회견을 열었다."),
    ("wikitree", "<세종대왕:PS>은 <1443년:DT> 훈민정음을 창제했다."),
    ("wikitree", "<현대자동차:OG>가 <미국 조지아주:LC>에 전기차 공장을 짓는다."),
    ("wikitree", "<오후 2시 30분:TI> <인천공항:LC> 제2터미널에서 출국 행사가 열렸다."),
    ("nsmc", "<송강호:PS> 연기는 역시 최고다"),
    ("nsmc", "<봉준호:PS> 감독 영화는 <두 번:QT> 봐야 제맛"),
    ("nsmc", "<2시간:TI>이 <10분:TI>처럼 지나갔다"),
    ("nsmc", "<마블:OG> 영화 중에 제일 재밌었음"),
    ("nsmc", "<어제:DT> <CGV:OG>에서 봤는데 사람 많더라"),
    ("nsmc", "<아이유:PS> 목소리 들으러 간 영화"),
    ("nsmc", "이런 영화 <1년:DT>에 하나 나올까 말까"),
    ("nsmc", "<한국:LC> 영화 수준이 이 정도라니 놀랍다"),
    ("nsmc", "별 <다섯 개:QT>도 아깝지 않다"),
    ("nsmc", "<전주:LC> 영화제에서 처음 보고 반했다"),
    ("nsmc", "그냥 그랬음 기대가 너무 컸나"),
    ("nsmc", "<톰 크루즈:PS>는 나이를 안 먹는 듯"),
]
NER_TYPES = ["PS", "LC", "OG", "DT", "TI", "QT"]


def ner_chars(markup: str) -> tuple[str, list[str], list[tuple[int, int, str]]]:
    text, tags, spans, pos = "", [], [], 0
    for match in re.finditer(r"<([^<>]+):(PS|LC|OG|DT|TI|QT)>", markup):
        plain = markup[pos:match.start()]
        text += plain
        tags += ["O"] * len(plain)
        word, label = match.group(1), match.group(2)
        spans.append((len(text), len(text) + len(word), label))
        text += word
        tags += [f"B-{label}"] + [f"I-{label}"] * (len(word) - 1)
        pos = match.end()
    text += markup[pos:]
    tags += ["O"] * (len(markup) - pos)
    return text, tags, spans


def ner(rng: random.Random) -> None:
    lines = ["## 토큰, 레이블 구분자 : \\t", "## 토큰 구분자 : \\n", "## 문장 구분자 : \\n\\n", "## 주석 : ##", "## 칼럼명 : CHAR\tNE_TAG"]
    run_a, run_b = [], []
    for k, (source, markup) in enumerate(NER):
        guid = f"klue-ner-v1_dev_{k:05d}{DEMO}-{source}"
        text, tags, spans = ner_chars(markup)
        lines.append(f"## {guid}\t{markup}")
        lines += [f"{c}\t{t}" for c, t in zip(text, tags)]
        lines.append("")
        # Run A (entity spans): misses quantities and times, cuts locations short after the first word.
        ents_a = []
        for start, end, label in spans:
            if label in ("QT", "TI") and rng.random() < 0.6:
                continue
            if label == "LC" and " " in text[start:end]:
                end = start + text[start:end].index(" ")
            ents_a.append({"start": start, "end": end, "label": label})
        if k % 6 == 3:
            first_word = text.split(" ")[0]
            if not any(s == 0 for s, _, _ in spans):
                ents_a.append({"start": 0, "end": len(first_word), "label": "PS"})
        run_a.append({"guid": guid, "entities": sorted(ents_a, key=lambda e: e["start"])})
        # Run B (character tags): confuses organisations with locations and dates with times.
        tags_b = ["O"] * len(text)
        for start, end, label in spans:
            swap = {"OG": "LC", "DT": "TI"}.get(label) if rng.random() < 0.5 else None
            new = swap or label
            tags_b[start:end] = [f"B-{new}"] + [f"I-{new}"] * (end - start - 1)
        run_b.append({"guid": guid, "tags": tags_b})
    path = BENCH / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_jsonl(RUNS / "ner" / "bert-crf.jsonl", run_a)
    write_jsonl(RUNS / "ner" / "char-bilstm.jsonl", run_b)


# ---------------------------------------------------------------------------------------------
# RE: sentence, subject (word, type), object (word, type), relation
RE = [
    ("wikipedia", "이순신은 1545년 한성에서 태어났다.", ("이순신", "PER"), ("1545년", "DAT"), "per:date_of_birth"),
    ("wikipedia", "이순신은 1545년 한성에서 태어났다.", ("이순신", "PER"), ("한성", "LOC"), "per:place_of_birth"),
    ("wikipedia", "삼성전자는 1969년 이병철이 설립한 전자 회사이다.", ("삼성전자", "ORG"), ("이병철", "PER"), "org:founded_by"),
    ("wikipedia", "삼성전자는 1969년 이병철이 설립한 전자 회사이다.", ("삼성전자", "ORG"), ("1969년", "DAT"), "org:founded"),
    ("wikitree", "김민수 대표는 지난해부터 네이버에서 근무하고 있다.", ("김민수", "PER"), ("네이버", "ORG"), "per:employee_of"),
    ("wikitree", "김민수 대표는 지난해부터 네이버에서 근무하고 있다.", ("김민수", "PER"), ("대표", "POH"), "per:title"),
    ("wikipedia", "현대자동차의 본사는 서울 서초구에 있다.", ("현대자동차", "ORG"), ("서울 서초구", "LOC"), "org:place_of_headquarters"),
    ("wikipedia", "방탄소년단은 빅히트 뮤직 소속의 7인조 보이 그룹이다.", ("방탄소년단", "ORG"), ("빅히트 뮤직", "ORG"), "org:member_of"),
    ("wikipedia", "방탄소년단은 빅히트 뮤직 소속의 7인조 보이 그룹이다.", ("방탄소년단", "ORG"), ("7인조", "NOH"), "org:number_of_employees/members"),
    ("wikitree", "배우 송혜교와 송중기는 2017년에 결혼했다.", ("송혜교", "PER"), ("송중기", "PER"), "per:spouse"),
    ("wikitree", "배우 송혜교와 송중기는 2017년에 결혼했다.", ("송혜교", "PER"), ("2017년", "DAT"), "no_relation"),
    ("wikipedia", "세종은 태종의 셋째 아들로 조선의 제4대 왕이다.", ("세종", "PER"), ("태종", "PER"), "per:parents"),
    ("wikipedia", "세종은 태종의 셋째 아들로 조선의 제4대 왕이다.", ("태종", "PER"), ("세종", "PER"), "per:children"),
    ("wikipedia", "세종은 태종의 셋째 아들로 조선의 제4대 왕이다.", ("세종", "PER"), ("왕", "POH"), "per:title"),
    ("policy", "국토교통부는 한국토지주택공사와 함께 공공주택 공급 계획을 발표했다.", ("국토교통부", "ORG"), ("한국토지주택공사", "ORG"), "no_relation"),
    ("wikipedia", "LG는 럭키금성의 새 이름으로 1995년부터 쓰였다.", ("LG", "ORG"), ("럭키금성", "ORG"), "org:alternate_names"),
    ("wikipedia", "김대중 전 대통령은 2009년 8월 18일 서울에서 서거했다.", ("김대중", "PER"), ("2009년 8월 18일", "DAT"), "per:date_of_death"),
    ("wikipedia", "김대중 전 대통령은 2009년 8월 18일 서울에서 서거했다.", ("김대중", "PER"), ("서울", "LOC"), "per:place_of_death"),
    ("wikitree", "손흥민은 춘천 출신으로 현재 런던에 거주한다.", ("손흥민", "PER"), ("춘천", "LOC"), "per:origin"),
    ("wikitree", "손흥민은 춘천 출신으로 현재 런던에 거주한다.", ("손흥민", "PER"), ("런던", "LOC"), "per:place_of_residence"),
    ("wikipedia", "윤동주는 연희전문학교를 졸업한 뒤 일본으로 유학을 떠났다.", ("윤동주", "PER"), ("연희전문학교", "ORG"), "per:schools_attended"),
    ("wikipedia", "윤동주는 연희전문학교를 졸업한 뒤 일본으로 유학을 떠났다.", ("윤동주", "PER"), ("일본", "LOC"), "no_relation"),
    ("wikitree", "카카오는 카카오톡과 카카오페이를 서비스한다.", ("카카오", "ORG"), ("카카오페이", "POH"), "org:product"),
    ("wikitree", "정의당은 진보 성향의 정당으로 분류된다.", ("정의당", "ORG"), ("진보", "POH"), "org:political/religious_affiliation"),
    ("wikipedia", "김구는 대한민국 임시정부 주석을 지냈으며 윤봉길과 함께 활동했다.", ("김구", "PER"), ("윤봉길", "PER"), "per:colleagues"),
    ("wikipedia", "김구는 대한민국 임시정부 주석을 지냈으며 윤봉길과 함께 활동했다.", ("대한민국 임시정부", "ORG"), ("김구", "PER"), "org:top_members/employees"),
    ("wikitree", "배우 김태희의 언니 김희원은 영화 제작자이다.", ("김태희", "PER"), ("김희원", "PER"), "per:siblings"),
    ("policy", "보건복지부는 다음 달 감염병 대응 지침을 개정한다.", ("보건복지부", "ORG"), ("다음 달", "DAT"), "no_relation"),
]


def re_task(rng: random.Random) -> None:
    from klue_viz.tasks.re import RELATIONS as relations

    records, run_a, run_b = [], [], []
    for k, (source, sentence, (sw, st), (ow, ot), label) in enumerate(RE):
        guid = f"klue-re-v1_dev_{k:05d}{DEMO}"
        s0, o0 = sentence.index(sw), sentence.index(ow)
        records.append({
            "guid": guid, "sentence": sentence,
            "subject_entity": {"word": sw, "start_idx": s0, "end_idx": s0 + len(sw) - 1, "type": st},
            "object_entity": {"word": ow, "start_idx": o0, "end_idx": o0 + len(ow) - 1, "type": ot},
            "label": label, "source": source,
        })
        # Run A (with probabilities): mixes up place-of-birth/origin/residence and parents/children.
        swaps = {"per:place_of_birth": "per:origin", "per:place_of_residence": "per:origin", "per:children": "per:parents",
                 "org:member_of": "org:members", "per:colleagues": "no_relation"}
        pred_a = swaps.get(label, label) if rng.random() < 0.7 else label
        probs = [0.004] * len(relations)
        probs[relations.index(pred_a)] = 0.75
        if pred_a != label:
            probs[relations.index(label)] = 0.15
        total = sum(probs)
        run_a.append({"guid": guid, "label": pred_a, "probs": [round(p / total, 5) for p in probs]})
        # Run B (labels only, so no AUPRC): cautious, says no_relation for date and title relations.
        pred_b = "no_relation" if ot in ("DAT", "POH") and label != "no_relation" and rng.random() < 0.6 else label
        if label == "no_relation" and st == "PER" and ot == "DAT":
            pred_b = "per:date_of_birth"
        run_b.append({"guid": guid, "label": pred_b})
    write_json(BENCH / "klue-re-v1.1" / "klue-re-v1.1_dev.json", records)
    write_jsonl(RUNS / "re" / "roberta-entity-marker.jsonl", run_a)
    write_jsonl(RUNS / "re" / "llm-zero-shot.jsonl", run_b)


# ---------------------------------------------------------------------------------------------
# DP: each word "form|lemma|POS|head|deprel"
DP = [
    ("wikitree", "경찰은 사고 원인을 조사하고 있다.", ["경찰은|경찰 은|NNG+JX|4|NP_SBJ", "사고|사고|NNG|3|NP", "원인을|원인 을|NNG+JKO|4|NP_OBJ", "조사하고|조사 하 고|NNG+XSV+EC|5|VP", "있다.|있 다 .|VX+EF+SF|0|VP"]),
    ("wikitree", "정부는 내년 예산을 크게 늘렸다.", ["정부는|정부 는|NNG+JX|5|NP_SBJ", "내년|내년|NNG|3|NP", "예산을|예산 을|NNG+JKO|5|NP_OBJ", "크게|크 게|VA+EC|5|VP_AJT", "늘렸다.|늘리 었 다 .|VV+EP+EF+SF|0|VP"]),
    ("wikitree", "서울시는 새 버스 노선을 다음 달 공개한다.", ["서울시는|서울시 는|NNP+JX|7|NP_SBJ", "새|새|MM|4|DP", "버스|버스|NNG|4|NP", "노선을|노선 을|NNG+JKO|7|NP_OBJ", "다음|다음|NNG|6|NP", "달|달|NNB|7|NP_AJT", "공개한다.|공개 하 ㄴ다 .|NNG+XSV+EF+SF|0|VP"]),
    ("wikitree", "그는 회의에서 새로운 계획을 발표했다.", ["그는|그 는|NP+JX|5|NP_SBJ", "회의에서|회의 에서|NNG+JKB|5|NP_AJT", "새로운|새롭 ㄴ|VA+ETM|4|VP_MOD", "계획을|계획 을|NNG+JKO|5|NP_OBJ", "발표했다.|발표 하 었 다 .|NNG+XSV+EP+EF+SF|0|VP"]),
    ("wikitree", "기업들은 인공지능 투자를 늘리고 인력을 채용했다.", ["기업들은|기업 들 은|NNG+XSN+JX|6|NP_SBJ", "인공지능|인공지능|NNG|3|NP", "투자를|투자 를|NNG+JKO|4|NP_OBJ", "늘리고|늘리 고|VV+EC|6|VP", "인력을|인력 을|NNG+JKO|6|NP_OBJ", "채용했다.|채용 하 었 다 .|NNG+XSV+EP+EF+SF|0|VP"]),
    ("wikitree", "시민들이 광장에 모여 축제를 즐겼다.", ["시민들이|시민 들 이|NNG+XSN+JKS|5|NP_SBJ", "광장에|광장 에|NNG+JKB|3|NP_AJT", "모여|모이 어|VV+EC|5|VP", "축제를|축제 를|NNG+JKO|5|NP_OBJ", "즐겼다.|즐기 었 다 .|VV+EP+EF+SF|0|VP"]),
    ("wikitree", "이번 조치는 소상공인과 자영업자에게 도움이 될 것이다.", ["이번|이번|NNG|2|NP", "조치는|조치 는|NNG+JX|7|NP_SBJ", "소상공인과|소상공인 과|NNG+JC|4|NP_CNJ", "자영업자에게|자영업자 에게|NNG+JKB|6|NP_AJT", "도움이|도움 이|NNG+JKC|6|NP_CMP", "될|되 ㄹ|VV+ETM|7|VP_MOD", "것이다.|것 이 다 .|NNB+VCP+EF+SF|0|VNP"]),
    ("wikitree", "연구팀은 한국어 모델의 성능을 비교했다.", ["연구팀은|연구팀 은|NNG+JX|5|NP_SBJ", "한국어|한국어|NNP|3|NP", "모델의|모델 의|NNG+JKG|4|NP_MOD", "성능을|성능 을|NNG+JKO|5|NP_OBJ", "비교했다.|비교 하 었 다 .|NNG+XSV+EP+EF+SF|0|VP"]),
    ("wikitree", "대표는 직원들과 함께 봉사 활동에 참여했다.", ["대표는|대표 는|NNG+JX|6|NP_SBJ", "직원들과|직원 들 과|NNG+XSN+JKB|3|NP_AJT", "함께|함께|MAG|6|AP", "봉사|봉사|NNG|5|NP", "활동에|활동 에|NNG+JKB|6|NP_AJT", "참여했다.|참여 하 었 다 .|NNG+XSV+EP+EF+SF|0|VP"]),
    ("wikitree", "올해 수출은 지난해보다 10% 늘었다.", ["올해|올해|NNG|5|NP_AJT", "수출은|수출 은|NNG+JX|5|NP_SBJ", "지난해보다|지난해 보다|NNG+JKB|5|NP_AJT", "10%|10 %|SN+SW|5|NP_AJT", "늘었다.|늘 었 다 .|VV+EP+EF+SF|0|VP"]),
    ("airbnb", "숙소가 깨끗하고 위치도 좋았어요.", ["숙소가|숙소 가|NNG+JKS|2|NP_SBJ", "깨끗하고|깨끗 하 고|XR+XSA+EC|4|VP", "위치도|위치 도|NNG+JX|4|NP_SBJ", "좋았어요.|좋 았 어요 .|VA+EP+EF+SF|0|VP"]),
    ("airbnb", "호스트가 정말 친절하셨습니다.", ["호스트가|호스트 가|NNG+JKS|3|NP_SBJ", "정말|정말|MAG|3|AP", "친절하셨습니다.|친절 하 시 었 습니다 .|NNG+XSA+EP+EP+EF+SF|0|VP"]),
    ("airbnb", "다음에 서울에 오면 또 묵고 싶어요.", ["다음에|다음 에|NNG+JKB|3|NP_AJT", "서울에|서울 에|NNP+JKB|3|NP_AJT", "오면|오 면|VV+EC|5|VP", "또|또|MAG|5|AP", "묵고|묵 고|VV+EC|6|VP", "싶어요.|싶 어요 .|VX+EF+SF|0|VP"]),
    ("airbnb", "방은 작지만 필요한 물건은 다 있었어요.", ["방은|방 은|NNG+JX|2|NP_SBJ", "작지만|작 지만|VA+EC|6|VP", "필요한|필요 하 ㄴ|NNG+XSA+ETM|4|VP_MOD", "물건은|물건 은|NNG+JX|6|NP_SBJ", "다|다|MAG|6|AP", "있었어요.|있 었 어요 .|VA+EP+EF+SF|0|VP"]),
    ("airbnb", "지하철역까지 걸어서 5분이면 갑니다.", ["지하철역까지|지하철역 까지|NNG+JX|4|NP_AJT", "걸어서|걷 어서|VV+EC|4|VP", "5분이면|5 분 이 면|SN+NNB+VCP+EC|4|VNP", "갑니다.|가 ㅂ니다 .|VV+EF+SF|0|VP"]),
    ("airbnb", "주변이 조용해서 푹 잘 수 있었습니다.", ["주변이|주변 이|NNG+JKS|2|NP_SBJ", "조용해서|조용 하 어서|XR+XSA+EC|6|VP", "푹|푹|MAG|4|AP", "잘|자 ㄹ|VV+ETM|5|VP_MOD", "수|수|NNB|6|NP_SBJ", "있었습니다.|있 었 습니다 .|VA+EP+EF+SF|0|VP"]),
    ("airbnb", "체크인 안내가 자세해서 편했어요.", ["체크인|체크인|NNG|2|NP", "안내가|안내 가|NNG+JKS|3|NP_SBJ", "자세해서|자세 하 어서|XR+XSA+EC|4|VP", "편했어요.|편 하 었 어요 .|XR+XSA+EP+EF+SF|0|VP"]),
    ("airbnb", "수건이 부족해서 조금 불편했습니다.", ["수건이|수건 이|NNG+JKS|2|NP_SBJ", "부족해서|부족 하 어서|NNG+XSA+EC|4|VP", "조금|조금|MAG|4|AP", "불편했습니다.|불편 하 었 습니다 .|NNG+XSA+EP+EF+SF|0|VP"]),
]


def dp(rng: random.Random) -> None:
    lines = ["## 토큰, 레이블 구분자 : \\t", "## 토큰 구분자 : \\n", "## 문장 구분자 : \\n\\n", "## 주석 : ##",
             "## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL"]
    run_a, run_b = [], []
    for k, (source, sentence, words) in enumerate(DP):
        guid = f"klue-dp-v1_dev_{k:05d}{DEMO}_{source}"
        lines.append(f"## {guid}\t{sentence}")
        parsed = [w.split("|") for w in words]
        assert [int(p[3]) for p in parsed].count(0) == 1 and all(0 <= int(p[3]) <= len(parsed) for p in parsed), guid
        assert " ".join(p[0] for p in parsed) == sentence, guid
        for i, (form, lemma, pos, head, rel) in enumerate(parsed, 1):
            lines.append(f"{i}\t{form}\t{lemma}\t{pos}\t{head}\t{rel}")
        lines.append("")
        heads = [int(p[3]) for p in parsed]
        rels = [p[4] for p in parsed]
        n = len(parsed)
        # Run A attaches long-distance dependents to the nearest verb-like word instead (a locality bias).
        heads_a = list(heads)
        for i, h in enumerate(heads, 1):
            if h > 0 and abs(h - i) >= 3 and rng.random() < 0.6:
                heads_a[i - 1] = min(i + 1, n)
        run_a.append({"guid": guid, "head": heads_a, "deprel": rels})
        # Run B gets the tree right more often but confuses adjunct and object/subject labels.
        swap = {"NP_AJT": "NP_OBJ", "NP_SBJ": "NP_AJT", "VP_MOD": "VP"}
        rels_b = [swap.get(r, r) if rng.random() < 0.35 else r for r in rels]
        heads_b = [h if rng.random() > 0.08 or h == 0 else max(0, h - 1) for h in heads]
        run_b.append({"guid": guid, "head": heads_b, "deprel": rels_b})
    path = BENCH / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_jsonl(RUNS / "dp" / "biaffine-roberta.jsonl", run_a)
    write_jsonl(RUNS / "dp" / "biaffine-bert.jsonl", run_b)


# ---------------------------------------------------------------------------------------------
# MRC: documents with questions (question, answer or None, question_type, plausible answer)
MRC = [
    ("acrofan", "경제", "전기차 충전소 확충", "환경부는 올해 전기차 급속 충전기 3,000기를 새로 설치한다고 밝혔다. 설치 지역은 충전 수요가 많은 수도권과 부산, 대구 등 광역시가 우선이다. 환경부 관계자는 충전 대기 시간을 절반으로 줄이는 것이 목표라고 말했다.", [
        ("환경부가 올해 새로 설치하는 급속 충전기는 몇 기인가?", "3,000기", 1, None),
        ("충전기 설치가 우선되는 지역 가운데 수도권 외의 광역시는 어디인가?", "부산, 대구", 2, None),
        ("환경부가 충전기 설치에 쓰는 예산은 얼마인가?", None, 3, "3,000기"),
    ]),
    ("hankyung", "IT", "국산 AI 반도체", "국내 스타트업 리벨리온은 데이터센터용 AI 반도체 '아톰'을 공개했다. 아톰은 기존 제품보다 전력 효율이 두 배 높으며, 내년 상반기부터 국내 통신사 데이터센터에 공급될 예정이다.", [
        ("리벨리온이 공개한 AI 반도체의 이름은?", "아톰", 1, None),
        ("아톰은 언제부터 데이터센터에 공급되나?", "내년 상반기", 1, None),
        ("아톰의 전력 효율은 기존 제품과 비교해 어떠한가?", "두 배 높으며", 2, None),
        ("아톰을 설계한 엔지니어는 누구인가?", None, 3, "리벨리온"),
    ]),
    ("wikipedia", None, "경복궁", "경복궁은 1395년 조선의 태조가 한양에 세운 법궁이다. 임진왜란 때 불에 탄 뒤 오랫동안 방치되었다가 1867년 흥선대원군의 주도로 다시 지어졌다. 근정전은 경복궁의 정전으로 국가의 큰 행사를 치르던 곳이다.", [
        ("경복궁을 처음 세운 왕은?", "태조", 1, None),
        ("불탄 경복궁의 재건을 주도한 사람은?", "흥선대원군", 2, None),
        ("근정전은 어떤 용도로 쓰였나?", "국가의 큰 행사를 치르던 곳", 1, None),
        ("경복궁 재건에 동원된 인원은 몇 명인가?", None, 3, "1867년"),
    ]),
    ("wikipedia", None, "한글날", "한글날은 세종대왕이 훈민정음을 반포한 것을 기념하는 날로 매년 10월 9일이다. 1926년 '가갸날'이라는 이름으로 처음 기념식이 열렸으며, 1928년부터 한글날로 이름이 바뀌었다.", [
        ("한글날은 매년 언제인가?", "10월 9일", 1, None),
        ("한글날의 처음 이름은 무엇이었나?", "가갸날", 1, None),
        ("한글날이라는 이름이 쓰이기 시작한 해는?", "1928년", 2, None),
        ("한글날이 공휴일에서 빠진 해는?", None, 3, "1928년"),
    ]),
    ("hankyung", "경제", "기준금리 동결", "한국은행 금융통화위원회는 11일 기준금리를 연 3.50%로 동결했다. 이창용 총재는 물가 상승률이 목표 수준으로 수렴할 때까지 긴축 기조를 유지하겠다고 밝혔다. 시장에서는 하반기 금리 인하 가능성을 점치고 있다.", [
        ("한국은행이 동결한 기준금리는 연 몇 퍼센트인가?", "3.50%", 1, None),
        ("긴축 기조 유지 방침을 밝힌 사람은?", "이창용 총재", 1, None),
        ("시장은 언제 금리 인하를 예상하나?", "하반기", 2, None),
        ("금융통화위원회 위원은 모두 몇 명인가?", None, 3, "11일"),
    ]),
    ("acrofan", "생활", "한강 야시장", "서울 밤도깨비 야시장이 다음 달 1일 여의도 한강공원에서 문을 연다. 올해는 푸드트럭 80대와 수공예품 판매대 100곳이 참여하며, 매주 금요일과 토요일 저녁 6시부터 11시까지 운영된다.", [
        ("야시장은 어디에서 열리나?", "여의도 한강공원", 1, None),
        ("야시장에 참여하는 푸드트럭은 몇 대인가?", "80대", 1, None),
        ("야시장은 일주일에 며칠 운영되나?", "금요일과 토요일", 2, None),
        ("야시장 입장료는 얼마인가?", None, 3, "80대"),
    ]),
]


def mrc(rng: random.Random) -> None:
    data, run_a, run_b = [], {}, []
    k = 0
    for source, category, title, context, qas in MRC:
        paragraph = {"context": context, "qas": []}
        for question, answer, qtype, plausible in qas:
            guid = f"klue-mrc-v1_dev_{k:05d}{DEMO}"
            qa = {"question": question, "answers": [], "guid": guid, "question_type": qtype, "is_impossible": answer is None}
            if answer is not None:
                qa["answers"] = [{"text": answer, "answer_start": context.index(answer)}]
            else:
                qa["plausible_answers"] = [{"text": plausible, "answer_start": context.index(plausible)}]
            paragraph["qas"].append(qa)
            # Run A (SQuAD-style {guid: answer}): answers unanswerable questions with the distractor, over-extends spans.
            if answer is None:
                run_a[guid] = plausible if rng.random() < 0.7 else ""
            elif qtype == 2 and rng.random() < 0.7:
                start = context.index(answer)
                run_a[guid] = context[max(0, start - 6):start + len(answer)].strip()
            else:
                run_a[guid] = answer
            # Run B (JSONL): abstains on reasoning questions and clips long answers to their first word.
            if answer is None:
                pred_b = ""
            elif qtype == 2 and rng.random() < 0.5:
                pred_b = ""
            elif " " in answer and rng.random() < 0.6:
                pred_b = answer.split(" ")[0]
            else:
                pred_b = answer
            run_b.append({"guid": guid, "answer": pred_b})
            k += 1
        document = {"title": title, "source": source, "paragraphs": [paragraph]}
        if category:
            document["news_category"] = category
        data.append(document)
    write_json(BENCH / "klue-mrc-v1.1" / "klue-mrc-v1.1_dev.json", {"version": "v1.1", "data": data})
    write_json(RUNS / "mrc" / "roberta-large.json", run_a)
    write_jsonl(RUNS / "mrc" / "bert-base.jsonl", run_b)


# ---------------------------------------------------------------------------------------------
# WoS: dialogues of (user text, state after it, system reply)
WOS = [
    (["관광", "식당"], [
        ("경복궁에 가려고 하는데 입장료가 얼마인가요?", ["관광-이름-경복궁"], "경복궁 입장료는 3,000원입니다."),
        ("근처에 한식당도 찾아 주세요. 가격대는 상관없어요.", ["관광-이름-경복궁", "식당-가격대-dontcare", "식당-종류-한식당", "식당-지역-서울 중앙"], "토속촌 삼계탕을 추천합니다."),
        ("거기 주차 가능한가요? 토요일 저녁 7시에 4명 예약해 주세요.", ["관광-이름-경복궁", "식당-가격대-dontcare", "식당-종류-한식당", "식당-지역-서울 중앙", "식당-이름-토속촌 삼계탕", "식당-예약 요일-토요일", "식당-예약 시간-19:00", "식당-예약 명수-4"], "예약되었습니다."),
    ]),
    (["숙소"], [
        ("서울 남쪽에 있는 저렴한 호텔 찾고 있어요.", ["숙소-가격대-저렴", "숙소-종류-호텔", "숙소-지역-서울 남쪽"], "강남 비즈니스 호텔이 있습니다."),
        ("인터넷 되나요? 되면 금요일부터 2박 예약할게요.", ["숙소-가격대-저렴", "숙소-종류-호텔", "숙소-지역-서울 남쪽", "숙소-인터넷 가능-yes", "숙소-이름-강남 비즈니스 호텔", "숙소-예약 요일-금요일", "숙소-예약 기간-2"], "예약 완료되었습니다."),
        ("아 그리고 예약 인원은 2명이에요.", ["숙소-가격대-저렴", "숙소-종류-호텔", "숙소-지역-서울 남쪽", "숙소-인터넷 가능-yes", "숙소-이름-강남 비즈니스 호텔", "숙소-예약 요일-금요일", "숙소-예약 기간-2", "숙소-예약 명수-2"], "인원 반영했습니다."),
    ]),
    (["택시", "관광"], [
        ("남산타워 가는 택시 불러 주세요.", ["택시-도착지-남산타워"], "어디서 출발하시나요?"),
        ("서울역에서 출발하고 오후 2시에 타고 싶어요.", ["택시-도착지-남산타워", "택시-출발지-서울역", "택시-출발 시간-14:00"], "예약되었습니다."),
        ("남산타워 영업시간도 알려 주세요.", ["택시-도착지-남산타워", "택시-출발지-서울역", "택시-출발 시간-14:00", "관광-이름-남산타워"], "밤 11시까지 운영합니다."),
    ]),
    (["식당"], [
        ("서울 북쪽에 양식당 있나요? 비싸도 괜찮아요.", ["식당-지역-서울 북쪽", "식당-종류-양식당", "식당-가격대-비싼"], "라 스칼라가 있습니다."),
        ("주류도 파나요?", ["식당-지역-서울 북쪽", "식당-종류-양식당", "식당-가격대-비싼", "식당-이름-라 스칼라", "식당-주류 판매-yes"], "네, 와인을 판매합니다."),
        ("그럼 일요일 12시 30분에 3명 예약해 주세요.", ["식당-지역-서울 북쪽", "식당-종류-양식당", "식당-가격대-비싼", "식당-이름-라 스칼라", "식당-주류 판매-yes", "식당-예약 요일-일요일", "식당-예약 시간-12:30", "식당-예약 명수-3"], "예약 완료되었습니다."),
    ]),
    (["지하철"], [
        ("강남역에서 홍대입구역까지 지하철로 얼마나 걸려요?", ["지하철-출발지-강남역", "지하철-도착지-홍대입구역"], "약 40분 걸립니다."),
        ("아침 8시에 출발하면 언제 도착해요?", ["지하철-출발지-강남역", "지하철-도착지-홍대입구역", "지하철-출발 시간-08:00"], "8시 40분쯤 도착합니다."),
    ]),
    (["관광", "숙소"], [
        ("경치 좋은 관광지를 추천해 주세요. 지역은 상관없어요.", ["관광-경치 좋은-yes", "관광-지역-dontcare"], "북한산 국립공원을 추천합니다."),
        ("좋네요. 근처에 게스트하우스도 있나요?", ["관광-경치 좋은-yes", "관광-지역-dontcare", "관광-이름-북한산 국립공원", "숙소-종류-게스트하우스"], "북한산 게스트하우스가 있습니다."),
        ("주차 되면 거기로 토요일 하루 예약해 주세요.", ["관광-경치 좋은-yes", "관광-지역-dontcare", "관광-이름-북한산 국립공원", "숙소-종류-게스트하우스", "숙소-주차 가능-yes", "숙소-이름-북한산 게스트하우스", "숙소-예약 요일-토요일", "숙소-예약 기간-1"], "예약되었습니다."),
        ("아 인원을 말 안 했네요. 한 명이에요.", ["관광-경치 좋은-yes", "관광-지역-dontcare", "관광-이름-북한산 국립공원", "숙소-종류-게스트하우스", "숙소-주차 가능-yes", "숙소-이름-북한산 게스트하우스", "숙소-예약 요일-토요일", "숙소-예약 기간-1", "숙소-예약 명수-1"], "반영했습니다."),
    ]),
]


def wos(rng: random.Random) -> None:
    dialogues, run_a, run_b = [], [], {}
    for k, (domains, turns) in enumerate(WOS):
        guid = f"wos-v1_dev_{k:05d}{DEMO}"
        dialogue = []
        stale: dict[str, str] = {}
        for t, (text, state, reply) in enumerate(turns):
            dialogue.append({"role": "user", "text": text, "state": state})
            dialogue.append({"role": "sys", "text": reply})
            # Run A (JSONL with turn): misses updates that come late in a turn (the last new slot is dropped).
            previous = set(turns[t - 1][1]) if t else set()
            new = [s for s in state if s not in previous]
            pred_a = [s for s in state if not (new and s == new[-1] and rng.random() < 0.6)]
            for s in pred_a:
                stale[s.rsplit("-", 1)[0]] = s
            run_a.append({"guid": guid, "turn": t, "state": pred_a})
            # Run B (the DST-competition dict): normalises values differently and adds dontcare for price.
            pred_b = [s.replace("19:00", "7시").replace("14:00", "오후 2시") for s in state]
            if any(s.startswith("식당-") for s in state) and not any(s.startswith("식당-가격대") for s in state):
                pred_b.append("식당-가격대-dontcare")
            run_b[f"{guid}-{t}"] = pred_b
        dialogues.append({"guid": guid, "domains": domains, "dialogue": dialogue})
    write_json(BENCH / "wos-v1.1" / "wos-v1.1_dev.json", dialogues)
    write_jsonl(RUNS / "wos" / "trade.jsonl", run_a)
    write_json(RUNS / "wos" / "som-dst.json", run_b)


def main() -> None:
    for build in (ynat, sts, nli, ner, re_task, dp, mrc, wos):
        build(random.Random(f"klue-viz-demo-{build.__name__}"))
    print(f"wrote {sum(1 for p in OUT.rglob('*') if p.is_file())} files under {OUT}")


if __name__ == "__main__":
    main()
