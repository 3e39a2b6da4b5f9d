"""Accuracy of the response_language checker (langdetect) on short texts, by length.

The texts are short sentences written for this benchmark in six languages (no corpus is
downloaded), at three lengths: two words, about five words, and about twelve words.
A text counts as right when the detected language is its own; "undecided" when no
language could be detected. langdetect is seeded, so the numbers are reproducible.

    .venv/bin/python benchmarks/language_id.py

Prints a table and writes ``benchmarks/results/language_id.json``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

from _table import Table, print_tables, write_results

from docket.adherence.checks.language import detect_language

ROOT = Path(__file__).resolve().parents[1]

TEXTS: dict[str, dict[str, list[str]]] = {
    "en": {
        "2 words": ["Thank you", "Good morning", "See you", "Train cancelled"],
        "5 words": [
            "My train was cancelled today.",
            "Where can I buy tickets?",
            "The weather is nice here.",
            "Please send me the refund.",
        ],
        "12 words": [
            "I would like to change my booking to the train that leaves later.",
            "The station was crowded this morning because two of the trains were late.",
            "You will get your money back within five working days, I promise.",
            "Could you tell me which platform the next train to Leeds leaves from?",
        ],
    },
    "fr": {
        "2 words": ["Merci beaucoup", "Bonne journée", "À bientôt", "Train annulé"],
        "5 words": [
            "Mon train a été annulé.",
            "Où puis-je acheter un billet ?",
            "Il fait beau aujourd'hui ici.",
            "Envoyez-moi le remboursement, s'il vous plaît.",
        ],
        "12 words": [
            "Je voudrais changer ma réservation pour le train qui part plus tard ce soir.",
            "La gare était pleine ce matin parce que deux trains avaient du retard.",
            "Vous serez remboursé dans les cinq jours ouvrables, je vous le promets.",
            "Pouvez-vous me dire de quel quai part le prochain train pour Lyon ?",
        ],
    },
    "de": {
        "2 words": ["Vielen Dank", "Guten Morgen", "Bis bald", "Zug ausgefallen"],
        "5 words": [
            "Mein Zug ist heute ausgefallen.",
            "Wo kann ich Fahrkarten kaufen?",
            "Das Wetter ist hier schön.",
            "Bitte schicken Sie mir das Geld.",
        ],
        "12 words": [
            "Ich möchte meine Buchung auf den Zug ändern, der später am Abend fährt.",
            "Der Bahnhof war heute Morgen voll, weil zwei Züge Verspätung hatten.",
            "Sie bekommen Ihr Geld innerhalb von fünf Werktagen zurück, das verspreche ich.",
            "Können Sie mir sagen, von welchem Gleis der nächste Zug nach Berlin fährt?",
        ],
    },
    "es": {
        "2 words": ["Muchas gracias", "Buenos días", "Hasta luego", "Tren cancelado"],
        "5 words": [
            "Mi tren fue cancelado hoy.",
            "¿Dónde puedo comprar los billetes?",
            "Hace buen tiempo aquí hoy.",
            "Por favor, envíeme el reembolso.",
        ],
        "12 words": [
            "Quisiera cambiar mi reserva al tren que sale más tarde esta noche.",
            "La estación estaba llena esta mañana porque dos trenes llegaron tarde.",
            "Recibirá su dinero en un plazo de cinco días hábiles, se lo prometo.",
            "¿Puede decirme de qué andén sale el próximo tren a Madrid, por favor?",
        ],
    },
    "it": {
        "2 words": ["Grazie mille", "Buongiorno signora", "A presto", "Treno cancellato"],
        "5 words": [
            "Il mio treno è stato cancellato.",
            "Dove posso comprare i biglietti?",
            "Oggi qui il tempo è bello.",
            "Per favore, mandatemi il rimborso.",
        ],
        "12 words": [
            "Vorrei cambiare la mia prenotazione con il treno che parte più tardi stasera.",
            "La stazione era piena stamattina perché due treni erano in ritardo.",
            "Riceverà i soldi entro cinque giorni lavorativi, glielo prometto davvero.",
            "Può dirmi da quale binario parte il prossimo treno per Roma, per favore?",
        ],
    },
    "nl": {
        "2 words": ["Dank je", "Goedemorgen allemaal", "Tot ziens", "Trein geannuleerd"],
        "5 words": [
            "Mijn trein is vandaag geannuleerd.",
            "Waar kan ik kaartjes kopen?",
            "Het weer is hier mooi.",
            "Stuur mij alstublieft het geld terug.",
        ],
        "12 words": [
            "Ik wil mijn boeking graag veranderen naar de trein die later vertrekt.",
            "Het station was vanochtend vol omdat twee treinen vertraging hadden.",
            "U krijgt uw geld binnen vijf werkdagen terug, dat beloof ik u.",
            "Kunt u mij vertellen van welk perron de volgende trein naar Utrecht vertrekt?",
        ],
    },
}


def main() -> None:
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    started = time.perf_counter()
    calls = 0
    for language, buckets in TEXTS.items():
        for bucket, texts in buckets.items():
            for text in texts:
                calls += 1
                row = rows[bucket]
                row["n"] += 1
                try:
                    row["right"] += detect_language(text) == language
                except ValueError:
                    row["undecided"] += 1
    per_call_ms = (time.perf_counter() - started) / calls * 1000
    table = {}
    for bucket, row in rows.items():
        accuracy = row["right"] / row["n"]
        table[bucket] = {"n": row["n"], "accuracy": accuracy, "undecided": row["undecided"]}
    out = ROOT / "benchmarks" / "results" / "language_id.json"
    result = {"languages": sorted(TEXTS), "by_length": table, "ms_per_detection": per_call_ms}
    write_results(out, result)
    print_tables(tables(result))
    print(f"wrote {out}")


def tables(result: dict) -> list[Table]:
    """Accuracy per text length; time per detection as a note."""
    table = Table(["length", "n", "accuracy", "undecided"], notes=[
        f"mean time per detection: {result['ms_per_detection']:.1f} ms "
        f"({len(result['languages'])} languages)"])  # fmt: skip
    for bucket, row in result["by_length"].items():
        table.add(bucket, row["n"], f"{row['accuracy']:.1%}", row["undecided"])
    return [table]


if __name__ == "__main__":
    main()
