// story.ts - building a guided story (web/lab/view.ts's Story): a view's
// scenarios add operations one by one, each with the caption the lab shows
// when it is the current step, and get back the index a later operation can
// name (SLUB: "the object step 3 allocated"; percpu: "the areas of step 1").
// The first operations may be set-up (`setup`): they run before the opening
// frame, which shows the state they build (Story.setup).

export class StoryBuilder<Op> {
  readonly ops: Op[] = [];
  readonly captions: string[] = [];
  /** How many of the first operations are set-up. */
  setups = 0;

  /** Adds a set-up operation (before any step of the story; throws after one); returns its index. */
  setup(o: Op, caption: string): number {
    if (this.setups !== this.ops.length) throw new Error('a set-up operation comes before the story\'s steps');
    this.setups++;
    return this.op(o, caption);
  }

  /** Adds an operation and its caption; returns its index. */
  op(o: Op, caption: string): number {
    this.ops.push(o);
    this.captions.push(caption);
    return this.ops.length - 1;
  }
}
