"""The Data page's choice widgets and their state: filled from the current task (same table) or from a
guess (a new table, :func:`fairdash.analysis.proxies.guess_roles`), refilled when the user picks another column,
and read back as a :class:`~fairdash.data.TaskSpec`. A UI-helper module: it imports Streamlit."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from .. import data
from ..analysis import proxies
from ..data import meaning
from ..targeting import targets
from .server import state
from .ui import navigation, text, workspace

WIDGETS = state.CHOICE_WIDGETS
POSITIVE_IS = {"favourable": "Favourable (e.g. a loan granted, income above $50K)",
               "unfavourable": "Unfavourable (e.g. rearrest, default, arrest)"}
KEPT = state.CHOICES_KEPT  # state.KeptChoices: a pending upload's choices, kept across pages


def sample_names() -> list[str]:
    """The bundled samples' names, in the order the Data page lists them."""
    return list(data.SAMPLES)


def sample_title(name: str) -> str:
    return data.SAMPLES[name].title


def sample_caption(name: str) -> str:
    """The sample's description and what its positive label means (library text, Markdown)."""
    smp = data.SAMPLES[name]
    return f"{smp.description} Positive label: **{smp.positive_meaning}**."


class Choices:
    """The choice widgets of one working table ``df`` (its profile ``prof``, its id ``table_id``)."""

    def __init__(self, df: pd.DataFrame, prof: pd.DataFrame, table_id: str):
        self.df, self.prof, self.table_id = df, prof, table_id
        self.columns = list(df.columns)

    def values(self, column: str) -> list[str]:
        """The values of ``column`` a multiselect offers (:func:`fairdash.data.column_values`)."""
        return data.column_values(self.df, column)

    def feature_candidates(self, s_column: str, y_column: str) -> list[str]:
        """The columns that may be features: every one but ``s`` and ``y``."""
        return [c for c in self.columns if c not in (s_column, y_column)]

    def cross_candidates(self, s_column: str, y_column) -> list[str]:
        """The columns ``s`` may be crossed with: neither ``s`` nor ``y``, with 2 to 30 distinct values."""
        return [c for c in self.columns if c not in (s_column, y_column) and 1 < self.df[c].nunique() <= 30]

    def flagged_caption(self) -> str:
        """The profile's flagged columns, each with its flags (column names shown literally); "" for none."""
        flagged = self.prof[self.prof["flags"] != ""]
        if not len(flagged):
            return ""
        return "Flagged columns: " + "; ".join(f"{text.literal(r.column, code=True)}: {text.literal(r.flags)}"
                                               for r in flagged.itertuples())

    def left_out_notes(self, exclude) -> list[str]:
        """One sentence per column left out of the features by default (id-like, constant or empty), apart
        from ``exclude``. They name columns (user text): shown literally."""
        return [data.left_out_note(column, why) + " Add it if it should be a feature."
                for column, why in data.left_out_by_default(self.prof, exclude=exclude).items()]

    def threshold(self, column: str) -> bool:
        """Is ``column`` split by a threshold rather than by its values (:func:`fairdash.data.is_threshold_column`)."""
        return data.is_threshold_column(self.prof, column)

    def _sample_drop(self) -> tuple:
        tid = self.table_id
        return data.SAMPLES[tid.split(":", 1)[1]].drop if tid.startswith("sample:") else ()

    def prepare(self) -> None:
        """Before the widgets are drawn: keep their values (same table), or bring back a pending upload's
        choices as the user left them (Streamlit forgets a widget's value when its page is left), or
        :meth:`reset` them for a new working table."""
        ss = state.current()
        if ss.widgets_for == self.table_id and ss.has(state.Session.s_column):
            return
        kept = ss.choices_kept
        if kept is not None and kept.table_id == self.table_id and self.table_id != ss.table_id:
            ss.put(kept.values)
            ss.widgets_for = self.table_id
            return
        self.reset()

    def keep(self) -> None:
        """After the widgets are drawn: keep a pending upload's choices until they are confirmed or
        discarded (the current task's choices need no copy: they come back from its spec)."""
        ss = state.current()
        if self.table_id == ss.table_id:
            del ss.choices_kept
        else:
            ss.choices_kept = state.KeptChoices(self.table_id, ss.values(WIDGETS))

    def reset(self) -> None:
        """A new working table: every choice widget takes the current spec (same table) or a guess,
        shown as a suggestion and committed only when the user confirms it."""
        ss = state.current()
        if self.table_id == ss.table_id:
            spec = ss.spec
            del ss.guess
        else:
            g = proxies.guess_roles(self.df, self.prof)
            spec = data.TaskSpec(g.s_column, g.y_column, g.s1_values, g.y1_values, y_threshold=g.y_threshold,
                                 s_threshold=g.s_threshold)
            ss.guess = state.Guess(self.table_id, g)
        ss.drop(WIDGETS)
        ss.s_column, ss.y_column = spec.s_column, spec.y_column
        ss.s_mode = "cross" if spec.s_with else ("each" if spec.s_multi else "two")
        if spec.s_with:
            ss.s_with = spec.s_with
        ss.group_labels = ", ".join(spec.group_labels)
        self._fill_values("s", spec)
        self._fill_values("y", spec)
        ss.features = list(spec.features) if spec.features is not None else data.default_features(
            self.df, self.prof, spec.s_column, spec.y_column, self._sample_drop())
        ss.missing = spec.missing
        ss.positive_meaning = spec.positive_meaning
        said = spec.positive_favourable
        ss.positive_is = meaning.WORDS[said] if said is not None else self._read_answer()
        ss.widgets_for = self.table_id

    def _label_words(self) -> tuple[bool | None, str]:
        """Whether the label's words (the meaning typed, else its column name and positive values) say that a
        positive label is favourable for the person, and those words (:func:`meaning.favourable_from_label`)."""
        ss = state.current()
        y_col = ss.y_column
        thr = ss.y_threshold if self.threshold(y_col) else None
        return meaning.favourable_from_label(ss.positive_meaning, y_col, ss.get(state.Session.y1_values, []), thr)

    def _read_answer(self):
        """The question's answer as the label's words give it ("favourable", "unfavourable"), or None: asked."""
        read, _ = self._label_words()
        return None if read is None else meaning.WORDS[read]

    def answered(self) -> bool:
        """Is it said (or read from the meaning typed) whether a positive label is favourable for the person? Until
        it is, an upload cannot be used and no group is called disadvantaged."""
        return meaning.label_favourable(self.spec())[1] != meaning.ASSUMED

    def _fill_values(self, role: str, spec=None) -> None:
        ss = state.current()
        col = ss.role_column(role)
        vals = data.column_values(self.df, col)
        if spec is not None and getattr(spec, f"{role}_column") == col:
            chosen, thr = list(getattr(spec, f"{role}1_values")), getattr(spec, f"{role}_threshold")
        else:  # the user picked another column: its values are a fresh guess, visible in the widget
            chosen, thr, _ = proxies.guess_values(self.df, col, role, self.prof)
        ss.set_role_values(role, [v for v in chosen if v in vals])
        if self.threshold(col):
            ss.set_role_threshold(role, float(thr) if thr is not None else float(pd.to_numeric(self.df[col]).median()))

    def column_changed(self, role: str) -> None:
        """The user picked another ``s`` or ``y`` column: its values are guessed again, and the column that
        was ``s`` (or ``y``) becomes an ordinary feature again. Nothing where the widgets are no longer this table's:
        a session file opened in the same rerun (its callback runs first) replaced the table and dropped the choices,
        and the page draws them afresh from the file's task."""
        ss = state.current()
        if ss.get(state.Session.widgets_for, None) != self.table_id or ss.role_column(role) not in self.columns:
            return
        self._fill_values(role)
        if role == "y" and ss.widgets_for:  # another label: its own words answer the question, or it is asked
            ss.positive_meaning = ""
            ss.positive_is = self._read_answer()
        feats = [c for c in ss.get(state.Session.features, []) if c not in (ss.s_column, ss.y_column)]
        old = ss.previous_column(role)
        flagged = set(self.prof.loc[self.prof["flags"] != "", "column"])
        if old and old in self.columns and old not in feats and old not in (ss.s_column, ss.y_column) \
                and old not in flagged and old not in self._sample_drop():
            feats.append(old)
        ss.features = [c for c in self.columns if c in feats]

    def spec(self) -> data.TaskSpec:
        """The choices as a :class:`~fairdash.data.TaskSpec`."""
        ss = state.current()
        s_col, y_col, mode = ss.s_column, ss.y_column, ss.get(state.Session.s_mode, "two")
        two = mode == "two"
        return data.TaskSpec(
            s_column=s_col, y_column=y_col,
            s1_values=tuple(ss.get(state.Session.s1_values, [])) if two and not self.threshold(s_col) else (),
            y1_values=() if self.threshold(y_col) else tuple(ss.get(state.Session.y1_values, [])),
            s_threshold=float(ss.s_threshold) if two and self.threshold(s_col) else None,
            y_threshold=float(ss.y_threshold) if self.threshold(y_col) else None,
            s_multi=mode == "each", s_with=ss.s_with if mode == "cross" else None,
            group_labels=tuple(g.strip() for g in str(ss.get(state.Session.group_labels, "")).split(",") if g.strip()),
            features=tuple(ss.get(state.Session.features, [])), missing=ss.get(state.Session.missing, "drop"),
            strata_column=ss.spec.strata_column if self.table_id == ss.table_id else None,
            positive_meaning=ss.get(state.Session.positive_meaning, ""),
            positive_favourable={"favourable": True, "unfavourable": False}.get(ss.positive_is),
        )

    def label_meaning(self) -> None:
        """What a positive label means, in the analyst's words, and the plain question whether it is favourable
        for the person: pre-filled where the label's words say so (the meaning typed, else its column name and
        positive values), with the words it was read from; else asked, with no answer until the analyst gives one
        (the answer names the disadvantaged group)."""
        ss = state.current()

        def read_meaning():
            said = meaning.favourable_from_meaning(ss.positive_meaning)
            if said is not None:
                ss.positive_is = meaning.WORDS[said]

        st.text_input("What does a positive label mean, in plain words?", key=state.POSITIVE_MEANING,
                      on_change=read_meaning,
                      placeholder="e.g. income above $50K a year (favourable), or rearrested (not favourable)")
        ss.setdefault(state.Session.positive_is, None)
        st.radio("Is a positive label favourable for the person?", list(POSITIVE_IS), key=state.POSITIVE_IS,
                 format_func=POSITIVE_IS.get, help="It decides which group is called disadvantaged: with a favourable "
                 "positive label the group with the lowest base rate, with an unfavourable one (rearrest, default) the "
                 "group with the highest.")
        read, words = self._label_words()
        if ss.positive_is is None:
            st.warning("Nothing in the label's words says whether a positive label is good or bad for the person: "
                       "answer the question above. Until then no group is called disadvantaged and the table cannot "
                       "be used.", icon=":material/help:")
        elif read is not None and meaning.WORDS[read] == ss.positive_is:
            st.caption(f"Read from the words \u201c{text.literal(words)}\u201d: {meaning.WORDS[read]}. "
                       "Change the answer above if that is wrong.")

    def meaning_line(self, y_col: str) -> None:
        """The sentence under the choices: what a positive label means, and what PR_t shares out."""
        ss = state.current()
        words = ss.positive_meaning or (
            f"{y_col} is " + (f"above {ss.y_threshold}" if self.threshold(y_col)
                              else " or ".join(map(repr, ss.get(state.Session.y1_values, []))) or "(nothing chosen)"))
        fav, how = meaning.label_favourable(self.spec())
        said = (f"It is {meaning.WORDS[fav]} for the person{'' if how == meaning.SAID else f' ({how})'}"
                if how != meaning.ASSUMED else "Whether it is favourable for the person is not answered yet")
        st.markdown(f"**Positive (y = 1) means:** {text.literal(words)}. {said}. The target positive rate PR_t is the "
                    "share of *each* group that the fair model will label positive, so a positive should be what you "
                    "want to share out fairly (or, as in COMPAS, what you want to be equally likely across groups even "
                    "if it is unfavourable).")

    def column_groups(self, feature_choices) -> None:
        """For many columns: per name-prefix group, one click to take all its columns in or leave them out."""
        ss = state.current()
        groups = workspace.column_groups(self.df, self.table_id, feature_choices)

        def set_group(cols, on):
            have = set(ss.get(state.Session.features, []))
            have = have | set(cols) if on else have - set(cols)
            ss.features = [c for c in feature_choices if c in have]

        with st.expander(f"Column groups ({len(groups)} groups of columns sharing a name prefix)"):
            chosen_now = set(ss.get(state.Session.features, []))
            for prefix, cols in groups.items():
                c1, c2, c3 = st.columns([3, 1, 1], vertical_alignment="center")
                c1.markdown(f"{text.literal(prefix, code=True)}: {sum(c in chosen_now for c in cols)} of {len(cols)} "
                            "columns chosen")
                c2.button("Select all", key=f"group_on_{prefix}", on_click=set_group, args=(cols, True))
                c3.button("Leave out", key=f"group_off_{prefix}", on_click=set_group, args=(cols, False))

    def leaks_and_proxies(self, task) -> None:
        """The task's leaks, each with one click to drop it, and its proxy table."""
        ss = state.current()
        leaks, proxy = workspace.leaks_and_proxies(self.df, self.table_id, task)

        def drop(columns):
            ss.features = [c for c in ss.get(state.Session.features, []) if c not in set(columns)]

        if leaks:
            st.subheader("Leaks")
            st.error(f"{len({x['column'] for x in leaks})} feature(s) give s or y away almost exactly, alone or "
                     "together. A model that sees a leak of y learns the leak instead of the task (accuracy near 1, "
                     "meaningless); a leak of s lets it use s directly.",
                     icon=":material/warning:")
            alone = {}  # one line (and one button) per column, whether it gives y, s or both away
            for leak in (x for x in leaks if not x.get("with")):
                alone.setdefault(leak["column"], []).append(leak)
            for column, found in alone.items():
                c1, c2 = st.columns([4, 1], vertical_alignment="center")
                c1.markdown(f"- {text.literal(column, code=True)} gives "
                            + " and ".join(f"**{x['of']}** away (score {x['score']:.3f})" for x in found))
                c2.button("Drop it", key=f"drop_leak_{column}", on_click=drop, args=([column],))
            for role in ("y", "s"):  # leaks that only several columns together give away, one line each
                joint = next((x for x in leaks if x.get("with") and x["of"] == role), None)
                if joint is not None:
                    c1, c2 = st.columns([4, 1], vertical_alignment="center")
                    c1.markdown("- " + ", ".join(text.literal(c, code=True) for c in joint["with"])
                                + f" give **{role}** away together "
                                f"(cross-validated AUC {joint['score']:.3f} of a logistic regression on the features; "
                                "no column does alone)")
                    c2.button("Drop them", key=f"drop_joint_{role}", on_click=drop, args=(list(joint["with"]),))
            st.button("Drop every leak", key="drop_all_leaks", on_click=drop,
                      args=(list(dict.fromkeys(x["column"] for x in leaks)),))
        with st.expander("Proxies: how well each feature alone predicts s", expanded=False):
            st.dataframe(proxy, key="proxy_table", hide_index=True,
                         column_config={"score": st.column_config.NumberColumn(format="%.3f")})
            st.caption("Score = the feature's single-feature AUC for telling the groups apart (0.5: not at all; 1: "
                       "exactly). A model that does not see s moves a group's rate only through such features, so "
                       "weak proxies are why a target can stay out of reach; 0.95 or more is listed as a leak.")

    @staticmethod
    def base_rate_spread(base_rates) -> float:
        """How far apart the groups' base rates lie: the largest less the smallest."""
        return float(max(base_rates) - min(base_rates))

    def protected_group(self, task, base_rates) -> str:
        """The optional choice of the protected group (kept for the session; by default the disadvantaged group:
        the lowest base rate where a positive label is favourable for the person, the highest where it is
        unfavourable), and the sentence that says which group it is. Until it is said whether a positive label is
        favourable, no group is named disadvantaged (a protected group the analyst chose still is named)."""
        ss = state.current()
        names = list(task.group_names)
        favourable, how = meaning.label_favourable(task.spec)
        low = names[targets.disadvantaged_group(base_rates, favourable)]
        default = (f"The disadvantaged group ({low}: {'lowest' if favourable else 'highest'} base rate)"
                   if how != meaning.ASSUMED else "The disadvantaged group (named once the question above is answered)")
        navigation.set_if_changed(state.PROTECTED_GROUP, ss.protected if ss.protected in names else "")
        st.selectbox("Protected group (optional: names the group the wording singles out)", [""] + names,
                     key=state.PROTECTED_GROUP, format_func=lambda g: g or default,
                     on_change=_name_protected)
        j, role = workspace.group_role(names, base_rates, task.spec)
        if role == "the protected group":
            return text.literal(f"{names[j]} is the protected group (chosen above).")
        if how == meaning.ASSUMED:
            return ("Which group is disadvantaged is named once you say whether a positive label is favourable for "
                    "the person (above).")
        return text.literal(meaning.disadvantaged_sentence(names[j], favourable, how))


def _name_protected() -> None:
    """The protected-group box's callback: the group the analyst named (none: ``None``)."""
    ss = state.current()
    ss.protected = ss.protected_group or None
